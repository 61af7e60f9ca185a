-- mistake: "bumps" the version by writing back the one the clerk read: it never changes, so
-- the next stale clerk's check passes too
-- fails: no_unseen_overwrite
local v = redis.call("HGET", KEYS[1], "version")
if v ~= ARGV[1] then
    return 0
end
redis.call("HSET", KEYS[1], "balance", ARGV[2], "version", ARGV[1])
return 1
