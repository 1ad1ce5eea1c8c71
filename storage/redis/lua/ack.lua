-- Ack: the job is done; forget it.
-- ARGV[4] id, ARGV[5] lease token.
-- Returns 1 done, -1 refused: another claim holds the job, or it was
-- rescheduled since this claim (nothing changed), 0 no such job.
-- A job whose lease expired and was taken back, but that nobody has claimed
-- or rescheduled since, is still completed by its late Ack: the work was
-- done. The lease entry ('~' .. token) proves it is the same claim.
local id = ARGV[4]
local holder = redis.call('HGET', leases, id)
if holder ~= ARGV[5] and holder ~= '~' .. ARGV[5] then
  if holder or redis.call('HEXISTS', jobs, id) == 1 then
    return -1
  end
  return 0
end
redis.call('HDEL', jobs, id)
redis.call('HDEL', leases, id, '@' .. ARGV[5])
redis.call('ZREM', inflight, id)
redis.call('ZREM', ready, id)
redis.call('ZREM', delayed, id)
redis.call('ZREM', dead, id)
touch()
return 1
