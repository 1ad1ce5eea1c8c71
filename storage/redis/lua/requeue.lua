-- Requeue (Fail and Park): store the caller's updated record, release the
-- lease, and either schedule the job again or bury it.
-- ARGV[7] id, ARGV[8] lease token, ARGV[9] record, ARGV[10] lane,
-- ARGV[11] eligible time (ms), ARGV[12] "1" to bury.
-- Returns {status, trimmed}; status as holderCheck (1 applied).
local id = ARGV[7]
local held = holderCheck(id, ARGV[8])
if held ~= 1 then
  return { held, 0 }
end
redis.call('HDEL', leases, id, '@' .. ARGV[8])
redis.call('ZREM', inflight, id)
redis.call('HSET', jobs, id, ARGV[9])
if ARGV[12] == '1' then
  bury(id)
else
  schedule(id, ARGV[10], tonumber(ARGV[11]))
end
touch()
return { 1, trimmed }
