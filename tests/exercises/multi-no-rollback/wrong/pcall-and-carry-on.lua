-- mistake: catches LPUSH's error with redis.pcall and reports success anyway: the item is taken,
-- no order is queued, and the shop believes it was
-- fails: writes_together
redis.call("DECR", KEYS[1])
redis.pcall("LPUSH", KEYS[2], ARGV[1])
return 1
