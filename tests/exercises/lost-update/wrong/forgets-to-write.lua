-- mistake: checks and answers "sold" but never takes the item from the stock
-- fails: stock_matches_sales
local left = tonumber(redis.call("GET", KEYS[1]) or "0")
if left > 0 then
    return 1
end
return 0
