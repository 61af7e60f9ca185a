-- mistake: compares HGET's string with a number: in Lua "1" ~= 1 is always true, so every
-- save is refused and the clerks reload for ever
-- fails: every_save_done
local v = redis.call("HGET", KEYS[1], "version")
if v ~= tonumber(ARGV[1]) then
    return 0
end
redis.call("HSET", KEYS[1], "balance", ARGV[2])
redis.call("HINCRBY", KEYS[1], "version", 1)
return 1
