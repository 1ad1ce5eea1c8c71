-- Ack: the job is done; forget it.
-- ARGV[7] id, ARGV[8] lease token.
-- Returns 1 done, -1 another claim holds the job (nothing changed),
-- 0 no such job. A job whose lease was taken back but that nobody holds
-- yet is still completed: the work was done.
local id = ARGV[7]
local holder = redis.call('HGET', leases, id)
if holder and holder ~= ARGV[8] then
  return -1
end
local existed = redis.call('HDEL', jobs, id)
redis.call('HDEL', leases, id)
redis.call('ZREM', inflight, id)
redis.call('ZREM', ready, id)
redis.call('ZREM', delayed, id)
redis.call('ZREM', dead, id)
if existed == 0 then
  return 0
end
touch()
return 1
