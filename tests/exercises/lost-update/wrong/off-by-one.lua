-- mistake: >= 0 instead of > 0 sells an item when the stock is already 0
-- fails: no_oversell
local left = tonumber(redis.call("GET", KEYS[1]) or "0")
if left >= 0 then
    redis.call("DECRBY", KEYS[1], 1)
    return 1
end
return 0
