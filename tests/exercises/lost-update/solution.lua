-- Read, decide and subtract in one script: nothing runs in between, and ARGV[1] (what the
-- worker saw before) is not trusted.
local left = tonumber(redis.call("GET", KEYS[1]) or "0")
if left > 0 then
    redis.call("DECRBY", KEYS[1], 1)
    return 1
end
return 0
