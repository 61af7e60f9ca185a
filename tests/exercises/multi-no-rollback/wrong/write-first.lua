-- mistake: takes the item first and queues the order after it, trusting the script to be all
-- or nothing: LPUSH's WRONGTYPE ends the script, and the DECR before it stays
-- fails: writes_together
redis.call("DECR", KEYS[1])
redis.call("LPUSH", KEYS[2], ARGV[1])
return 1
