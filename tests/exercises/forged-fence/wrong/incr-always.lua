-- mistake: increments first and returns the fence whether or not SET NX took the lock
-- fails: acquire_took_lock
local fence = redis.call("INCR", KEYS[2])
redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2])
return fence
