-- Run marker (CollyStorage): the sign that the crawl's shared state is
-- still in Redis. The first worker to join a crawl writes a run id; every
-- worker compares it with the one it joined. A Redis that restarted
-- without persistence, was flushed or evicted the crawl's keys has none,
-- or (once a worker has joined again) another one. A worker that finds
-- the state lost writes a tombstone ('~' and why): a worker that joins
-- afterwards is refused instead of taking the emptied Redis for a new
-- crawl, until the crawl is purged.
-- KEYS[9] run marker STRING: the crawl's run id (refreshed by touch, so it
--         lives as long as the rest of the crawl)
-- ARGV[4] a fresh run id, ARGV[5] '1' to join (write it if there is none)
-- or '0' to check (never write).
-- Returns the run id in Redis (or the tombstone), or false when there is
-- none and checking.
local marker = KEYS[9]
local run = redis.call('GET', marker)
if not run then
  if ARGV[5] ~= '1' then
    return false
  end
  run = ARGV[4]
  redis.call('SET', marker, run)
end
redis.call('PEXPIRE', marker, retention)
return run
