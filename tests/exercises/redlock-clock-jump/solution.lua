-- go-redsync's deleteScript (mutex.go): on each master, delete the lock only if it still
-- holds our token, in one script.
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("DEL", KEYS[1])
else
    return 0
end
