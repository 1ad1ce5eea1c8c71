-- Reclaim: take back jobs whose lease expired, without claiming anything.
-- ARGV[7] batch size, ARGV[8] last_error for reclaimed jobs.
-- Returns {reclaimed, buried, trimmed}.
local reclaimed, buried = reclaim(tonumber(ARGV[7]), ARGV[8])
if reclaimed > 0 then
  touch()
end
return { reclaimed, buried, trimmed }
