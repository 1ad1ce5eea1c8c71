-- Claim: in one atomic step, take back expired leases, promote due delayed
-- jobs, pop the best ready job and lease it.
-- ARGV[4] lease deadline (ms), ARGV[5] lease token, ARGV[6] promote batch,
-- ARGV[7] reclaim batch, ARGV[8] last_error for reclaimed jobs.
-- Returns {1, id, record, reclaimed, buried, trimmed} with a job, or
-- {0, next delayed time or -1, next lease deadline or -1, reclaimed, buried, trimmed}
-- when nothing is ready.
-- A claim run again with its token (the client's own retry of a claim
-- whose answer was lost) gets the job the first run leased, its lease
-- renewed, instead of a second job while the first waits out its lease
-- unseen. leases maps '@' .. token to the job, while the claim holds it.
local prev = redis.call('HGET', leases, '@' .. ARGV[5])
if prev then
  if redis.call('HGET', leases, prev) == ARGV[5] and redis.call('ZSCORE', inflight, prev) then
    local raw = redis.call('HGET', jobs, prev)
    if raw then
      redis.call('ZADD', inflight, ARGV[4], prev)
      touch()
      return { 1, prev, raw, 0, 0, 0 }
    end
  end
  redis.call('HDEL', leases, '@' .. ARGV[5])
end
local reclaimed, buried = reclaim(tonumber(ARGV[7]), ARGV[8])
local promoted = promote(tonumber(ARGV[6]))
local changed = reclaimed + promoted > 0
while true do
  local top = redis.call('ZPOPMIN', ready)
  if #top == 0 then
    break
  end
  changed = true
  local id = top[1]
  local raw = redis.call('HGET', jobs, id)
  if raw then -- an id without a record (never expected) is dropped
    redis.call('ZADD', inflight, ARGV[4], id)
    redis.call('HSET', leases, id, ARGV[5], '@' .. ARGV[5], id)
    touch()
    return { 1, id, raw, reclaimed, buried, trimmed }
  end
end
if changed then
  touch()
end
local nextDue, nextLease = -1, -1
local d = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
if #d > 0 then
  nextDue = tonumber(d[2])
end
local f = redis.call('ZRANGE', inflight, 0, 0, 'WITHSCORES')
if #f > 0 then
  nextLease = tonumber(f[2])
end
return { 0, nextDue, nextLease, reclaimed, buried, trimmed }
