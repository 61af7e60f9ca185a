-- mistake: returns SET's reply (OK) instead of a fence: nobody ever believes it got the lock
-- fails: acquire_took_lock
return redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2])
