-- mistake: decrements only when there is stock but reports a sale every time
-- fails: no_oversell
if tonumber(redis.call("GET", KEYS[1]) or "0") > 0 then
    redis.call("DECRBY", KEYS[1], 1)
end
return 1
