-- Open: check that the keys are a checkpoint of a format this build reads,
-- and stamp the format on a new one.
-- ARGV[2] the format this build writes.
-- Returns {status, format}: status 1 ok, -1 a key holds something that is
-- not a checkpoint (its name is the second value).
for i = 1, #KEYS do
  local t = redis.call('TYPE', KEYS[i])['ok']
  local want = 'hash'
  if i == 2 then
    want = 'string'
  elseif i >= 5 then
    want = 'zset'
  end
  if t ~= 'none' and t ~= want then
    return { -1, KEYS[i] }
  end
end
local format = tonumber(redis.call('HGET', info, 'format'))
if not format then
  redis.call('HSET', info, 'format', ARGV[2])
  touch()
  format = tonumber(ARGV[2])
end
return { 1, format }
