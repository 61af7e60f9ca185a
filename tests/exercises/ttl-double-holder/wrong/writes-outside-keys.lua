-- mistake: also writes an audit key built from ARGV, a key it was not given in KEYS
-- fails: script_keys_declared
redis.call("SET", "audit:" .. ARGV[1], "released")
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("DEL", KEYS[1])
end
return 0
