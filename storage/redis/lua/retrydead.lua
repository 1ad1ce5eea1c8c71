-- RetryDead: give a dead letter a fresh set of attempts and make it ready
-- now. Its last error is kept for the record.
-- ARGV[4] id. Returns 1 requeued, 0 not a dead letter.
local id = ARGV[4]
if not redis.call('ZSCORE', dead, id) then
  return 0
end
redis.call('ZREM', dead, id)
redis.call('HDEL', leases, id) -- a new life: no late Ack from an old claim
local raw = redis.call('HGET', jobs, id)
if not raw then
  return 0
end
local job = cjson.decode(raw)
job.attempts = 0
job.not_before = now
redis.call('HSET', jobs, id, cjson.encode(job))
schedule(id, now)
touch()
return 1
