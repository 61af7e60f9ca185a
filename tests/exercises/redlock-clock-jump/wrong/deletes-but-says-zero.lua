-- mistake: deletes our own lock but always returns 0: the masters count as "not ours", and the
-- release reports a lost lock it in fact released
-- fails: release_removes_own_lock
if redis.call("GET", KEYS[1]) == ARGV[1] then
    redis.call("DEL", KEYS[1])
end
return 0
