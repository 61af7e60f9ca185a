-- mistake: deletes our own lock but always returns 0, so the caller believes it was lost
-- fails: release_removes_own_lock
if redis.call("GET", KEYS[1]) == ARGV[1] then
    redis.call("DEL", KEYS[1])
end
return 0
