-- mistake: returns DECRBY's reply, the stock left: after the last item that is 0, so the
-- shop does not count the sale it made
-- fails: all_sold
local left = tonumber(redis.call("GET", KEYS[1]) or "0")
if left > 0 then
    return redis.call("DECRBY", KEYS[1], 1)
end
return 0
