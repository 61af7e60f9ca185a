-- mistake: the score in seconds (TIME's first element) but the window from ARGV in
-- milliseconds: now - 60000 is 16 hours ago, nothing is ever trimmed, and once the limit is
-- reached the user is shut out
-- fails: rate_within_limit
local now = tonumber(redis.call("TIME")[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - tonumber(ARGV[1]))
if redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[2]) then
    redis.call("ZADD", KEYS[1], now, ARGV[3])
    redis.call("PEXPIRE", KEYS[1], ARGV[1])
    return 1
end
return 0
