-- Extend: push the lease deadline of a job this claim still holds.
-- ARGV[7] id, ARGV[8] lease token, ARGV[9] new deadline (ms).
-- Returns status as holderCheck (1 extended).
local id = ARGV[7]
local held = holderCheck(id, ARGV[8])
if held ~= 1 then
  return held
end
redis.call('ZADD', inflight, ARGV[9], id)
touch()
return 1
