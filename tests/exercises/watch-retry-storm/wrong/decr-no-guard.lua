-- mistake: DECR without looking: the stock goes below zero and every buyer "buys"
-- fails: no_oversell
return redis.call("DECR", KEYS[1])
