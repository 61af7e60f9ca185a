-- A sliding window: the times of the requests let through, in a sorted set, on the server's
-- clock. Trim what left the window, count what is in it, add only a request that passes; all in
-- one script, so two requests cannot both see room for one.
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
if redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[2]) then
    redis.call("ZADD", KEYS[1], now, ARGV[3])
    redis.call("PEXPIRE", KEYS[1], window)
    return 1
end
return 0
