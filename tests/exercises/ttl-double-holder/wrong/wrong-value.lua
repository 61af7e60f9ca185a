-- mistake: compares the key's value with the key's name instead of the token
-- fails: release_removes_own_lock
if redis.call("GET", KEYS[1]) == KEYS[1] then
    return redis.call("DEL", KEYS[1])
end
return 0
