-- mistake: also appends to a sales log it was not given in KEYS
-- fails: script_keys_declared
local left = tonumber(redis.call("GET", KEYS[1]) or "0")
if left > 0 then
    redis.call("DECRBY", KEYS[1], 1)
    redis.call("RPUSH", "sales:log", KEYS[1])
    return 1
end
return 0
