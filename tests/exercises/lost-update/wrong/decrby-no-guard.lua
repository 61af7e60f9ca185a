-- mistake: DECRBY without looking: the stock goes below zero and every worker sells
-- fails: no_oversell
redis.call("DECRBY", KEYS[1], 1)
return 1
