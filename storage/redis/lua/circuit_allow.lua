-- Allow: may one request go now?
-- Returns {granted (1/0), state, generation, retry-at (µs), trips, changed,
-- seq}: changed is 1 when this call moved the circuit from open to
-- half-open (its cooldown had passed); the permit is then the first probe.
-- A refusal's state says why: open until retry-at, half-open with every
-- probe slot taken, or closed but paused by a Retry-After until retry-at.
-- seq numbers a closed circuit's permits across every worker, in the order
-- they were handed out (the state's q, never reset): the window keeps the
-- outcomes in that order, whatever order they are recorded in. Probes and
-- refusals have none (0), as in the in-process circuit. A closed Allow
-- writes only that counter; for a domain never seen it makes the state
-- key, which expires after the retention like every other.
local st = load()
-- A Retry-After a worker was given holds every worker (a closed or
-- half-open circuit: an open one refuses anyway).
local paused = tonumber(redis.call('HGET', stateKey, 'p')) or 0
if st.state ~= OPEN and paused > now then
  return { 0, CLOSED, st.gen, paused, st.trips, 0, 0 }
end
if st.state == CLOSED then
  return { 1, CLOSED, st.gen, st.retryAt, st.trips, 0, issue() }
end
if st.state == OPEN then
  if now < st.retryAt then
    return { 0, OPEN, st.gen, st.retryAt, st.trips, 0, 0 }
  end
  move(st, HALF_OPEN)
  addProbe(st)
  save(st)
  return { 1, HALF_OPEN, st.gen, st.retryAt, st.trips, 1, 0 }
end
-- Half-open: leases that passed free their slots first.
redis.call('ZREMRANGEBYSCORE', probesKey, '-inf', now)
if redis.call('ZCARD', probesKey) >= maxProbes then
  return { 0, HALF_OPEN, st.gen, st.retryAt, st.trips, 0, 0 }
end
addProbe(st)
save(st)
return { 1, HALF_OPEN, st.gen, st.retryAt, st.trips, 0, 0 }
