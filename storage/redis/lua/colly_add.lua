-- AddRequest (CollyStorage): queue Colly requests the crawl has not seen.
-- KEYS[7] visited ZSET request id -> 0 when done, else the deadline (ms)
--         of a claim by a fetch outside the queue
-- KEYS[8] cookies HASH host -> cookie string (only touched here)
-- ARGV[4..] groups of three: id, eligible time (ms), record.
-- A request is skipped when it is done, claimed by a live fetch, or has a
-- job already (queued, in flight or dead). Returns the number queued.
local visited = KEYS[7]
local added = 0
for i = 4, #ARGV, 3 do
  local id = ARGV[i]
  local score = tonumber(redis.call('ZSCORE', visited, id))
  if not (score and (score == 0 or score > now)) and redis.call('HSETNX', jobs, id, ARGV[i + 2]) == 1 then
    schedule(id, tonumber(ARGV[i + 1]))
    added = added + 1
  end
end
if added > 0 then
  touch()
end
return added
