-- Scan: the next records in Seq order among the states asked for.
-- ARGV[2] the last Seq already seen, ARGV[3] how many, ARGV[4..] states.
-- Returns the stored values, in ascending Seq.
local after, limit = ARGV[2], tonumber(ARGV[3])
local found = {}
for i = 4, #ARGV do
  local r = redis.call('ZRANGEBYSCORE', stateKey(ARGV[i]), '(' .. after, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  for j = 1, #r, 2 do
    found[#found + 1] = { tonumber(r[j + 1]), r[j] }
  end
end
table.sort(found, function(a, b) return a[1] < b[1] end)
local out = {}
for k = 1, math.min(limit, #found) do
  local v = redis.call('HGET', recs, found[k][2])
  if v then
    out[#out + 1] = v
  end
end
return out
