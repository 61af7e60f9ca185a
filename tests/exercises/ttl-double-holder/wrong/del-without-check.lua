-- mistake: DEL without the check: deletes whoever's lock is there now
-- fails: no_foreign_unlock
return redis.call("DEL", KEYS[1])
