-- Shared head of every circuit script (breakerscripts.go prepends it). One
-- domain's three-state breaker, the same state machine as the in-process
-- circuit of extensions/breaker (circuit.go there), kept in three keys:
--
-- KEYS[1] state   HASH s state (0 closed, 1 open, 2 half-open), g generation,
--                      r retry-at (Unix µs), c consecutive failures,
--                      f failures in the window, k probes passed this
--                      half-open round, t trips, n probe ids handed out
-- KEYS[2] window  LIST the latest counted outcomes, oldest first, each
--                      "<class>:<latency ns>" (class 1 and 2 are failures)
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
