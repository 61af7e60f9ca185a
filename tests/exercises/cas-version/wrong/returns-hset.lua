-- mistake: returns HSET's reply, the number of fields it added: 0 when balance already existed,
-- so the clerk believes it lost, reloads and adds its credit again and again
-- fails: every_save_done
local v = redis.call("HGET", KEYS[1], "version")
if v ~= ARGV[1] then
    return 0
end
redis.call("HINCRBY", KEYS[1], "version", 1)
return redis.call("HSET", KEYS[1], "balance", ARGV[2])
