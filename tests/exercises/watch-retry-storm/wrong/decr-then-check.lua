-- mistake: decrements first and checks afterwards, without putting the item back
-- fails: stock_matches_sales
redis.call("DECRBY", KEYS[1], 1)
if tonumber(redis.call("GET", KEYS[1])) < 0 then
    return 0
end
return 1
