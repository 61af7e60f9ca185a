-- mistake: checks the queue's type, but only after DECR: the refusal comes too late, the item
-- is already taken
-- fails: writes_together
redis.call("DECR", KEYS[1])
local t = redis.call("TYPE", KEYS[2]).ok
if t ~= "list" and t ~= "none" then
    return redis.error_reply("ERR the order queue is not a list")
end
redis.call("LPUSH", KEYS[2], ARGV[1])
return 1
