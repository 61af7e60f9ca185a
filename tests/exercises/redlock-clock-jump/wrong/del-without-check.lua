-- mistake: DEL without the check: on m3 it deletes B's lock, which took A's place after the jump
-- fails: no_foreign_unlock
return redis.call("DEL", KEYS[1])
