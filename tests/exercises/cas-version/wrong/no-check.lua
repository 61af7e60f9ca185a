-- mistake: saves and bumps the version without comparing it: a clerk with a stale copy
-- overwrites a newer save
-- fails: no_unseen_overwrite
redis.call("HSET", KEYS[1], "balance", ARGV[2])
redis.call("HINCRBY", KEYS[1], "version", 1)
return 1
