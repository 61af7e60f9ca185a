-- mistake: builds the counter's name itself instead of using KEYS[2] (and breaks the slot rule)
-- fails: script_keys_declared
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
    return redis.call("INCR", "fence:" .. KEYS[1])
end
return 0
