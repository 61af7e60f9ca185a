-- mistake: moves the worker's SET into the script but keeps its stale arithmetic: both
-- workers read 1, both write 0, both sell
-- fails: no_oversell
local seen = tonumber(ARGV[1])
if seen > 0 then
    redis.call("SET", KEYS[1], seen - 1)
    return 1
end
return 0
