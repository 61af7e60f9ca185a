-- mistake: accepts only an existing list; before the first order the queue does not exist yet
-- (TYPE says "none", and LPUSH would create it), so buyer 1 is refused too
-- fails: first_checkout_done
local t = redis.call("TYPE", KEYS[2]).ok
if t ~= "list" then
    return redis.error_reply("ERR the order queue is not a list")
end
redis.call("DECR", KEYS[1])
redis.call("LPUSH", KEYS[2], ARGV[1])
return 1
