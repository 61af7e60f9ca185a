-- mistake: <= instead of <: a request passes when the window already holds the limit, so
-- every window lets one too many through
-- fails: rate_within_limit
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
if redis.call("ZCARD", KEYS[1]) <= tonumber(ARGV[2]) then
    redis.call("ZADD", KEYS[1], now, ARGV[3])
    redis.call("PEXPIRE", KEYS[1], window)
    return 1
end
return 0
