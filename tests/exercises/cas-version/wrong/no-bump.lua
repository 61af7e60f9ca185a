-- mistake: compares the version but never bumps it: after the first save the version is
-- still 1, so the stale clerk's check passes and it overwrites
-- fails: no_unseen_overwrite
local v = redis.call("HGET", KEYS[1], "version")
if v ~= ARGV[1] then
    return 0
end
redis.call("HSET", KEYS[1], "balance", ARGV[2])
return 1
