-- mistake: counts every request ever let through (no ZREMRANGEBYSCORE): once the limit is
-- reached nothing passes again, even when the window has room
-- fails: rate_within_limit
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[2]) then
    redis.call("ZADD", KEYS[1], now, ARGV[3])
    redis.call("PEXPIRE", KEYS[1], ARGV[1])
    return 1
end
return 0
