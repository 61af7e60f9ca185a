-- mistake: validates and queues the order but never takes the item: the shop counts a sale the
-- stock does not show
-- fails: stock_matches_sales
local t = redis.call("TYPE", KEYS[2]).ok
if t ~= "list" and t ~= "none" then
    return redis.error_reply("ERR the order queue is not a list")
end
redis.call("LPUSH", KEYS[2], ARGV[1])
return 1
