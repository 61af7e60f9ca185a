-- mistake: compares with ARGV[2], which the release does not pass (nil): never deletes
-- fails: release_removes_own_lock
if redis.call("GET", KEYS[1]) == ARGV[2] then
    return redis.call("DEL", KEYS[1])
end
return 0
