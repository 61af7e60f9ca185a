-- The seed's fenced acquire: SET NX PX, and only if it took the lock, the next fence.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
    return redis.call("INCR", KEYS[2])
else
    return 0
end
