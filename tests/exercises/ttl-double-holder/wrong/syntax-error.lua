-- mistake: the script does not compile (a missing "end")
-- fails: release_removes_own_lock
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("DEL", KEYS[1])
