-- mistake: also counts the refusals in a key it was not given in KEYS (a script must name
-- every key it touches: a cluster routes it by its KEYS)
-- fails: script_keys_declared
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
if redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[2]) then
    redis.call("ZADD", KEYS[1], now, ARGV[3])
    redis.call("PEXPIRE", KEYS[1], window)
    return 1
end
redis.call("INCR", "rl:refused:42")
return 0
