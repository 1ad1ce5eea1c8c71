-- Enqueue: add jobs that are not already in the crawl.
-- ARGV[4..] groups of three: id, eligible time (ms), record.
-- Returns the number of jobs added (an id already present, whether queued,
-- in flight or dead, is skipped).
local added = 0
for i = 4, #ARGV, 3 do
  local id = ARGV[i]
  if redis.call('HSETNX', jobs, id, ARGV[i + 2]) == 1 then
    schedule(id, tonumber(ARGV[i + 1]))
    added = added + 1
  end
end
if added > 0 then
  touch()
end
return added
