-- mistake: answers "sold" without taking the item from the stock
-- fails: no_oversell
if tonumber(redis.call("GET", KEYS[1]) or "0") > 0 then
    return 1
end
return 0
