-- mistake: takes the lock but returns a made-up fence instead of the counter's next value
-- fails: no_stale_write
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
    return 99
end
return 0
