-- Every check before the first write: a script has no rollback, so an error after DECR would
-- leave the item taken and no order queued.
if ARGV[1] == "" then
    return redis.error_reply("ERR empty order id")
end
local t = redis.call("TYPE", KEYS[2]).ok
if t ~= "list" and t ~= "none" then
    return redis.error_reply("ERR the order queue holds a " .. t .. ", not a list")
end
if tonumber(redis.call("GET", KEYS[1]) or "0") <= 0 then
    return 0
end
redis.call("DECR", KEYS[1])
redis.call("LPUSH", KEYS[2], ARGV[1])
return 1
