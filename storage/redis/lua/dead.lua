-- Dead: read dead letters, newest first. Changes nothing.
-- ARGV[4] first rank, ARGV[5] last rank.
-- Returns a flat list of {id, time of death (ms), record}.
local ids = redis.call('ZREVRANGE', dead, ARGV[4], ARGV[5], 'WITHSCORES')
local out = {}
for i = 1, #ids, 2 do
  local raw = redis.call('HGET', jobs, ids[i])
  if raw then
    out[#out + 1] = ids[i]
    out[#out + 1] = ids[i + 1]
    out[#out + 1] = raw
  end
end
return out
