-- Extend: push the lease deadline of a job this claim still holds.
-- ARGV[4] id, ARGV[5] lease token, ARGV[6] new deadline (ms).
-- Returns status as holderCheck (1 extended).
local id = ARGV[4]
local held = holderCheck(id, ARGV[5])
if held ~= 1 then
  return held
end
redis.call('ZADD', inflight, ARGV[6], id)
touch()
return 1
