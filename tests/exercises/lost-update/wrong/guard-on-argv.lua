-- mistake: subtracts atomically but decides on the stale read: the second worker still
-- sees 1 in ARGV and takes an item that is gone
-- fails: no_oversell
if tonumber(ARGV[1]) > 0 then
    redis.call("DECRBY", KEYS[1], 1)
    return 1
end
return 0
