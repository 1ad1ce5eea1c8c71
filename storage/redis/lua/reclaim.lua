-- Reclaim: take back jobs whose lease expired, without claiming anything.
-- ARGV[4] batch size, ARGV[5] last_error for reclaimed jobs.
-- Returns {reclaimed, buried, trimmed}.
local reclaimed, buried = reclaim(tonumber(ARGV[4]), ARGV[5])
if reclaimed > 0 then
  touch()
end
return { reclaimed, buried, trimmed }
