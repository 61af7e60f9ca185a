-- mistake: an unconditional DEL whose reply is hidden (always 0)
-- fails: no_foreign_unlock
return redis.call("DEL", KEYS[1]) * 0
