-- mistake: checks that the lock exists, not that it is ours (on m3 it is B's)
-- fails: no_foreign_unlock
if redis.call("EXISTS", KEYS[1]) == 1 then
    return redis.call("DEL", KEYS[1])
end
return 0
