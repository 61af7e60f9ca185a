-- mistake: keeps the article's fixed window (INCR, PEXPIRE on the first hit): a burst just
-- before the key expires and another just after it both pass
-- fails: rate_within_limit
local current = redis.call("INCR", KEYS[1])
if current == 1 then
    redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
if current > tonumber(ARGV[2]) then
    return 0
end
return 1
