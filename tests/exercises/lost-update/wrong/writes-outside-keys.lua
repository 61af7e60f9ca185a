-- mistake: also appends the sale to an order list it was not given in KEYS (a script must
-- name every key it touches: a cluster routes it by its KEYS)
-- fails: script_keys_declared
local left = tonumber(redis.call("GET", KEYS[1]) or "0")
if left > 0 then
    redis.call("DECRBY", KEYS[1], 1)
    redis.call("RPUSH", "orders:42", "sold")
    return 1
end
return 0
