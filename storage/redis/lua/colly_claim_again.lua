-- Claim again (CollyStorage): the retry of a claim whose answer never came
-- (Redis went away after running it, before answering). That claim may
-- have leased a job to this token; hand the same job out, with a fresh
-- lease, instead of leasing another while the first waits out its lease
-- unseen. Otherwise claim as lua/claim.lua does (run above as claim()).
-- Same arguments and answer as claim.lua; ARGV[8] is the token of the
-- first try.
local held = redis.call('HGETALL', leases) -- one entry per job in flight: small
for i = 1, #held, 2 do
  if held[i + 1] == ARGV[8] then
    local id = held[i]
    local raw = redis.call('HGET', jobs, id)
    if raw and redis.call('ZSCORE', inflight, id) then
      redis.call('ZADD', inflight, ARGV[7], id)
      touch()
      return { 1, id, raw, 0, 0, 0 }
    end
  end
end
return claim()
