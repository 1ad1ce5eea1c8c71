-- HoldOpen (and RestoreOpen): open the circuit until a given time, for a
-- reason found outside its window (a latency slope, slow calls, a grown
-- cooldown, a fleet-wide pause, a state restored from a checkpoint).
-- ARGV[9] until (µs), ARGV[10] '1' if until is ahead of now (the caller
-- compares at full precision), ARGV[11] trips floor (RestoreOpen; 0 for
-- none), ARGV[12] '1' if this opening counts as a trip.
-- Returns {changed (1/0), from, trips, window}. A closed or half-open
-- circuit opens (a new generation, its window cleared; window is the
-- evidence it held); an open one stays open at least until then, never
-- shorter. Trips never go down.
local st = load()
local untilAt, ahead, floor, counts = tonumber(ARGV[9]), ARGV[10] == '1', tonumber(ARGV[11]), ARGV[12] == '1'
local dirty = false
if floor > st.trips then
  st.trips = floor
  dirty = true
end
if not ahead then
  if dirty then
    save(st)
  end
  return { 0, st.state, st.trips, {} }
end
if st.state == OPEN then
  if untilAt > st.retryAt then
    st.retryAt = untilAt
    dirty = true
  end
  if dirty then
    save(st)
  end
  return { 0, st.state, st.trips, {} }
end
if counts then
  st.trips = st.trips + 1
end
local evidence = redis.call('LRANGE', windowKey, 0, -1)
local from = move(st, OPEN)
resetWindow(st)
st.retryAt = untilAt
save(st)
return { 1, from, st.trips, evidence }
