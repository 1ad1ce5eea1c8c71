-- Shared head of every queue script (scripts.go prepends it).
--
-- KEYS[1] ready    ZSET id -> eligible time (ms)
-- KEYS[2] delayed  ZSET id -> eligible time (ms)
-- KEYS[3] inflight ZSET id -> lease deadline (ms)
-- KEYS[4] dead     ZSET id -> time of death (ms)
-- KEYS[5] jobs     HASH id -> job record (JSON)
-- KEYS[6] leases   HASH id -> token of the claim holding the job, or '~' .. token
--                  of an expired claim nobody has replaced yet; and '@' .. token
--                  -> id while that claim holds the job (claim.lua)
--
-- ARGV[1] now (Unix ms, from the caller's clock, never Redis TIME)
-- ARGV[2] retention (ms): TTL given to every key on each change
-- ARGV[3] dead-letter limit (0 = none)
-- ARGV[4..] the script's own arguments
-- KEYS[7] (the queue's scripts) or KEYS[9] (the Colly scripts) is the run
-- marker when a CollyStorage calls: see the guard at the end.
local ready, delayed, inflight, dead, jobs, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local now = tonumber(ARGV[1])
local retention = ARGV[2]
local deadLimit = tonumber(ARGV[3])
local trimmed = 0 -- dead letters dropped over the limit by this call

-- schedule puts a job where its eligible time says: ready if due, else
-- delayed, each ordered by eligible time.
local function schedule(id, eligible)
  if eligible <= now then
    redis.call('ZADD', ready, eligible, id)
  else
    redis.call('ZADD', delayed, eligible, id)
  end
end

-- bury moves a job (already out of every other set) to the dead letters and
-- drops the oldest ones beyond the limit, records included.
local function bury(id)
  redis.call('ZADD', dead, now, id)
  if deadLimit > 0 then
    local over = redis.call('ZCARD', dead) - deadLimit
    while over > 0 do
      local n = math.min(over, 1000)
      local old = redis.call('ZRANGE', dead, 0, n - 1)
      redis.call('HDEL', jobs, unpack(old))
      redis.call('HDEL', leases, unpack(old))
      redis.call('ZREMRANGEBYRANK', dead, 0, n - 1)
      trimmed = trimmed + n
      over = over - n
    end
  end
end

-- touch refreshes the TTL of all the crawl's keys: an active crawl never
-- expires, an abandoned one disappears after the retention.
local function touch()
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], retention)
  end
end

-- reclaim takes back up to limit jobs whose lease has expired: the worker
-- died, hung or forgot. That spends an attempt (so a job that kills its
-- workers ends in the dead letters instead of killing them forever) and
-- makes the job ready again at once. Returns the number taken back and how
-- many of those were buried.
local function reclaim(limit, reason)
  local expired = redis.call('ZRANGEBYSCORE', inflight, '-inf', now, 'LIMIT', 0, limit)
  local buried = 0
  for _, id in ipairs(expired) do
    redis.call('ZREM', inflight, id)
    -- Keep the expired token, marked, so that a late Ack from the same
    -- claim can still complete the job while nobody else holds it.
    local holder = redis.call('HGET', leases, id)
    if holder and string.sub(holder, 1, 1) ~= '~' then
      redis.call('HSET', leases, id, '~' .. holder)
      redis.call('HDEL', leases, '@' .. holder) -- a retry of its claim must not get it back
    end
    local raw = redis.call('HGET', jobs, id)
    if raw then
      local job = cjson.decode(raw)
      job.attempts = (tonumber(job.attempts) or 0) + 1
      job.last_error = reason
      job.failed_at = now
      job.not_before = now
      redis.call('HSET', jobs, id, cjson.encode(job))
      if job.attempts >= (tonumber(job.max_attempts) or 1) then
        bury(id)
        buried = buried + 1
      else
        schedule(id, now)
      end
    end
  end
  return #expired, buried
end

-- promote moves up to limit delayed jobs whose time has come into ready,
-- scored by the time they became eligible (not the time of promotion).
local function promote(limit)
  local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
  for i = 1, #due, 2 do
    local id = due[i]
    redis.call('ZREM', delayed, id)
    if redis.call('HEXISTS', jobs, id) == 1 then
      redis.call('ZADD', ready, tonumber(due[i + 1]), id)
    end
  end
  return #due / 2
end

-- holderCheck says whether the claim with this token holds the job:
-- 1 it does, -1 another claim holds it or its lease was taken back
-- (leases then holds another token, or '~' and the expired one),
-- 0 no such job.
local function holderCheck(id, token)
  local holder = redis.call('HGET', leases, id)
  if holder == token then
    return 1
  end
  if holder or redis.call('HEXISTS', jobs, id) == 1 then
    return -1
  end
  return 0
end

-- The run marker guard. Called by a CollyStorage, a script does nothing to
-- a crawl whose run marker is gone (Redis restarted without persistence,
-- was flushed, evicted the crawl) or marked lost: its writes would start a
-- crawl without a marker in the emptied Redis, which a worker joining
-- later would take for a new one. It answers BWLOST; the storage then
-- joins the run if it never had (a new crawl) or reports the state lost.
-- Only the run script (bwJoin) writes the marker.
do
  local guard = (#KEYS == 7 and KEYS[7]) or (#KEYS == 9 and KEYS[9]) or nil
  if guard and not bwJoin then
    local run = redis.call('GET', guard)
    if not run or string.sub(run, 1, 1) == '~' then
      return redis.error_reply('BWLOST the crawl\'s run marker is gone or marks it lost')
    end
  end
end
