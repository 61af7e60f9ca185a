-- mistake: compares TYPE's reply with a string; a status reply reaches Lua as a table {ok = ...},
-- so it never equals "list" and every checkout is refused, the good ones too
-- fails: first_checkout_done
local t = redis.call("TYPE", KEYS[2])
if t ~= "list" and t ~= "none" then
    return redis.error_reply("ERR the order queue is not a list")
end
redis.call("DECR", KEYS[1])
redis.call("LPUSH", KEYS[2], ARGV[1])
return 1
