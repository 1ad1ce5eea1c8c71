-- Record: the outcome of a permit.
-- ARGV[9] the permit's generation, ARGV[10] '1' if it is a probe,
-- ARGV[11] the outcome as a window entry "<class>:<latency ns>" (its seq is added),
-- ARGV[12] '1' if the class is counted, ARGV[13] '1' if it is a failure,
-- ARGV[14] the permit's seq (0: as if handed out now).
-- Returns {0} when the state did not change, else
-- {1, from, to, reason, trips, retry-at (µs), window}: window is the
-- evidence of a trip on rate or consecutive failures (earliest first), empty
-- otherwise (a failed probe's evidence is the probe, which the caller has).
local st = load()
if tonumber(ARGV[9]) ~= st.gen then
  return { 0 } -- stale: the circuit moved on since the permit was handed out
end
local probe, entry, counted, failure = ARGV[10] == '1', ARGV[11], ARGV[12] == '1', ARGV[13] == '1'

if st.state == CLOSED then
  if not counted then
    return { 0 }
  end
  local seq = tonumber(ARGV[14])
  if seq == 0 then -- a permit made by hand: as if handed out now
    seq = issue()
  end
  addIssued(st, entry, seq, failure)
  if not failure then
    st.consec = 0
    save(st)
    return { 0 }
  end
  st.consec = st.consec + 1
  local reason = 0
  if st.failures >= need then
    reason = FAILURE_RATE
  elseif consecLimit > 0 and st.consec >= consecLimit then
    reason = CONSECUTIVE
  end
  if reason == 0 then
    save(st)
    return { 0 }
  end
  local evidence = redis.call('LRANGE', windowKey, 0, -1)
  local from = trip(st)
  save(st)
  return { 1, from, OPEN, reason, st.trips, st.retryAt, evidence }
end

if st.state == HALF_OPEN and probe then
  -- Free one slot: the oldest lease, which is this probe's or an older one
  -- that would expire first anyway.
  redis.call('ZPOPMIN', probesKey)
  if failure then
    local from = trip(st)
    save(st)
    return { 1, from, OPEN, PROBE_FAILED, st.trips, st.retryAt, {} }
  end
  if counted then
    st.passed = st.passed + 1
    if st.passed >= maxProbes then
      resetWindow(st)
      local from = move(st, CLOSED)
      save(st)
      return { 1, from, CLOSED, PROBES_PASSED, st.trips, st.retryAt, {} }
    end
  end
  -- Not counted (throttled, gone, cancelled…): the slot is free for
  -- another probe.
  save(st)
end
return { 0 }
