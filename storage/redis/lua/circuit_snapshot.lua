-- Snapshot: read the circuit without changing it.
-- Returns {state, retry-at (µs), trips, outcomes in the window, failures
-- among them, probes in flight (leases not yet passed)}.
local st = load()
return { st.state, st.retryAt, st.trips, redis.call('LLEN', windowKey), st.failures,
  redis.call('ZCOUNT', probesKey, '(' .. now, '+inf') }
