-- mistake: the time in seconds as both score and member: every request of the same second is
-- the same member, ZADD only updates it, ZCARD hardly grows and the whole burst passes
-- fails: rate_within_limit
local now = tonumber(redis.call("TIME")[1])
local window = tonumber(ARGV[1]) / 1000
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
if redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[2]) then
    redis.call("ZADD", KEYS[1], now, now)
    redis.call("PEXPIRE", KEYS[1], ARGV[1])
    return 1
end
return 0
