-- mistake: hands out a fence without taking the lock: everybody "acquires" at once
-- fails: acquire_took_lock
return redis.call("INCR", KEYS[2])
