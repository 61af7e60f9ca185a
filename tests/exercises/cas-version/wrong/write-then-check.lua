-- mistake: writes first and checks afterwards: the stale clerk gets its 0, but its balance is
-- already written over the newer one
-- fails: no_unseen_overwrite
local v = redis.call("HGET", KEYS[1], "version")
redis.call("HSET", KEYS[1], "balance", ARGV[2])
if v ~= ARGV[1] then
    return 0
end
redis.call("HINCRBY", KEYS[1], "version", 1)
return 1
