-- Put and PutOutput: records, and output entries, in one step
-- (storage.OutputStore); Put gives no entries.
-- KEYS[11..] each output's ids HASH (id -> "<pos>|<log key>") and each
-- (output, part)'s log LIST ("<id>|<data>", its index the entry's Pos).
-- ARGV[2] n, the records; ARGV[3..2+3n] their triplets, in order (a later
-- duplicate wins): id, state (1..6), record JSON;
-- then quadruples: the entry's ids key and log key (indexes into KEYS),
-- its id, its data. An entry whose id is in its output's ids already is
-- left out. Returns each entry's Pos, or -1 for one left out.
local n = tonumber(ARGV[2])
for i = 3, 2 + 3 * n, 3 do
  putRecord(ARGV[i], ARGV[i + 1], ARGV[i + 2])
end
local took = {}
for i = 3 + 3 * n, #ARGV, 4 do
  local ids, log, id = KEYS[tonumber(ARGV[i])], KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2]
  if redis.call('HEXISTS', ids, id) == 1 then
    took[#took + 1] = -1
  else
    local pos = redis.call('RPUSH', log, id .. '|' .. ARGV[i + 3]) - 1
    redis.call('HSET', ids, id, pos .. '|' .. log)
    took[#took + 1] = pos
  end
end
touch()
return took
