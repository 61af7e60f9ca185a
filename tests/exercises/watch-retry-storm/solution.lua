-- Check and take in one script: no WATCH, no retries, no oversell.
local left = tonumber(redis.call("GET", KEYS[1]) or "0")
if left > 0 then
    redis.call("DECRBY", KEYS[1], 1)
    return 1
end
return 0
