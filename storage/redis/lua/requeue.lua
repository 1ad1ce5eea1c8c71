-- Requeue (Fail and Park): store the caller's updated record, release the
-- lease, and either schedule the job again or bury it.
-- ARGV[4] id, ARGV[5] lease token, ARGV[6] record,
-- ARGV[7] eligible time (ms), ARGV[8] "1" to bury.
-- Returns {status, trimmed}; status as holderCheck (1 applied).
local id = ARGV[4]
local held = holderCheck(id, ARGV[5])
if held ~= 1 then
  return { held, 0 }
end
redis.call('HDEL', leases, id, '@' .. ARGV[5])
redis.call('ZREM', inflight, id)
redis.call('HSET', jobs, id, ARGV[6])
if ARGV[8] == '1' then
  bury(id)
else
  schedule(id, tonumber(ARGV[7]))
end
touch()
return { 1, trimmed }
