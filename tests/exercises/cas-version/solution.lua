-- Write only if the record is still at the version the clerk read, and bump the version with
-- every write, so that any clerk holding an older copy is refused.
local v = redis.call("HGET", KEYS[1], "version")
if v ~= ARGV[1] then
    return 0
end
redis.call("HSET", KEYS[1], "balance", ARGV[2])
redis.call("HINCRBY", KEYS[1], "version", 1)
return 1
