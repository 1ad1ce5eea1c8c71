-- Enqueue: add jobs that are not already in the crawl.
-- ARGV[7..] groups of four: id, lane, eligible time (ms), record.
-- Returns the number of jobs added (an id already present, whether queued,
-- in flight or dead, is skipped).
local added = 0
for i = 7, #ARGV, 4 do
  local id = ARGV[i]
  if redis.call('HSETNX', jobs, id, ARGV[i + 3]) == 1 then
    schedule(id, ARGV[i + 1], tonumber(ARGV[i + 2]))
    added = added + 1
  end
end
if added > 0 then
  touch()
end
return added
