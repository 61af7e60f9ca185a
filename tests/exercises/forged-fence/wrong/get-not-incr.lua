-- mistake: reads the counter instead of incrementing it: every holder gets the same fence
-- fails: no_stale_write
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
    return tonumber(redis.call("GET", KEYS[2]))
end
return 0
