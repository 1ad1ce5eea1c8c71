-- Shared head of every circuit script (breakerscripts.go prepends it). One
-- domain's three-state breaker, the same state machine as the in-process
-- circuit of extensions/breaker (circuit.go there), kept in three keys:
--
-- KEYS[1] state   HASH s state (0 closed, 1 open, 2 half-open), g generation,
--                      r retry-at (Unix µs), c consecutive failures,
--                      f failures in the window, k probes passed this
--                      half-open round, t trips, n probe ids handed out,
--                      q closed permits handed out (their seq; never reset)
-- KEYS[2] window  LIST the latest counted outcomes by the order their
--                      requests left (seq), earliest first, each
--                      "<class>:<latency ns>:<seq>" (class 1 and 2 are
--                      failures; an entry without its seq counts as 0)
-- KEYS[3] probes  ZSET probe id -> lease deadline (Unix µs): the probes in
--                      flight; a lease that passed frees its slot
--
-- ARGV[1] now (Unix µs, from the caller's clock, never Redis TIME)
-- ARGV[2] window size, ARGV[3] failures that trip a full window,
-- ARGV[4] consecutive failures that trip (0: off), ARGV[5] cooldown (µs),
-- ARGV[6] half-open probes, ARGV[7] probe lease (µs),
-- ARGV[8] retention (ms): TTL after the last change (plus the rest of the
--         cooldown while open, so an open circuit never expires)
-- ARGV[9..] the script's own arguments
local stateKey, windowKey, probesKey = KEYS[1], KEYS[2], KEYS[3]
local now = tonumber(ARGV[1])
local windowSize = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local consecLimit = tonumber(ARGV[4])
local cooldown = tonumber(ARGV[5])
local maxProbes = tonumber(ARGV[6])
local lease = tonumber(ARGV[7])
local retention = tonumber(ARGV[8])

local CLOSED, OPEN, HALF_OPEN = 0, 1, 2
-- Reasons a script decides, as breaker.go indexes Go's breaker.Reason*
-- constants (HoldOpen's reason is the caller's).
local FAILURE_RATE, CONSECUTIVE, PROBE_FAILED, PROBES_PASSED = 1, 2, 3, 4

-- load reads the circuit; a domain never seen (or expired) is closed, at
-- generation 0, like a new in-process circuit.
local function load()
  local v = redis.call('HMGET', stateKey, 's', 'g', 'r', 'c', 'f', 'k', 't', 'n')
  return {
    state = tonumber(v[1]) or CLOSED,
    gen = tonumber(v[2]) or 0,
    retryAt = tonumber(v[3]) or 0,
    consec = tonumber(v[4]) or 0,
    failures = tonumber(v[5]) or 0,
    passed = tonumber(v[6]) or 0,
    trips = tonumber(v[7]) or 0,
    probeIds = tonumber(v[8]) or 0,
  }
end

-- save writes the circuit back and refreshes the TTL of its keys: an idle
-- domain is forgotten after the retention, an open one never before its
-- cooldown has passed.
local function save(st)
  redis.call('HSET', stateKey, 's', st.state, 'g', st.gen, 'r', st.retryAt, 'c', st.consec,
    'f', st.failures, 'k', st.passed, 't', st.trips, 'n', st.probeIds)
  local ttl = retention
  if st.state == OPEN and st.retryAt > now then
    ttl = ttl + math.ceil((st.retryAt - now) / 1000)
  end
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end

local function isFailure(entry)
  local class = string.sub(entry, 1, 1)
  return class == '1' or class == '2'
end

-- move changes state and starts a new generation, so results of permits
-- handed out before are ignored. Every state change goes through here.
-- Returns the state it left.
local function move(st, to)
  local from = st.state
  st.state = to
  st.gen = st.gen + 1
  st.passed = 0
  redis.call('DEL', probesKey)
  return from
end

local function resetWindow(st)
  redis.call('DEL', windowKey)
  st.failures = 0
  st.consec = 0
end

-- trip opens the circuit for the cooldown. Returns the state it left.
local function trip(st)
  st.trips = st.trips + 1
  st.retryAt = now + cooldown
  local from = move(st, OPEN)
  resetWindow(st)
  return from
end

-- addProbe takes a probe slot until now + lease.
local function addProbe(st)
  st.probeIds = st.probeIds + 1
  redis.call('ZADD', probesKey, now + lease, st.probeIds)
end

-- issue numbers a permit: the next seq, across every worker. The counter
-- lives in the state hash; a state key it makes expires after the
-- retention (save refreshes it from then on).
local function issue()
  local seq = redis.call('HINCRBY', stateKey, 'q', 1)
  if seq == 1 then
    redis.call('PEXPIRE', stateKey, retention)
  end
  return seq
end

-- seqOf reads the seq of a window entry; 0 for one without.
local function seqOf(entry)
  return tonumber(string.match(entry, '^%d+:%-?%d+:(%d+)$')) or 0
end

-- addIssued puts entry, the outcome of the request that left seq-th, in
-- the window as internal/window's AddIssued does: the window stays in seq
-- order, a full one makes room by its earliest outcome, and an outcome
-- earlier than all a full window holds is dropped. In order it costs an
-- RPUSH; a late one goes behind every later outcome. Returns whether it
-- was kept; st.failures follows the window.
local function addIssued(st, entry, seq, failure)
  local n = redis.call('LLEN', windowKey)
  if n >= windowSize and seq < seqOf(redis.call('LINDEX', windowKey, 0)) then
    return false -- earlier than every outcome held
  end
  entry = entry .. ':' .. seq
  if n == 0 or seqOf(redis.call('LINDEX', windowKey, -1)) <= seq then
    n = redis.call('RPUSH', windowKey, entry)
  else
    -- Behind every later outcome: before the first one later than seq.
    -- The window is in seq order and entries carry their seq, so the
    -- first entry equal to that one is that one.
    local held = redis.call('LRANGE', windowKey, 0, -1)
    local pivot = held[#held]
    for i = #held - 1, 1, -1 do
      if seqOf(held[i]) <= seq then
        break
      end
      pivot = held[i]
    end
    n = redis.call('LINSERT', windowKey, 'BEFORE', pivot, entry)
  end
  if failure then
    st.failures = st.failures + 1
  end
  while n > windowSize do -- full: the earliest outcome leaves
    if isFailure(redis.call('LPOP', windowKey)) then
      st.failures = st.failures - 1
    end
    n = n - 1
  end
  return true
end
