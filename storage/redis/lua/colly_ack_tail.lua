-- Ack (CollyStorage): the queue's ack (lua/ack.lua, run above as ack())
-- and, when it completes the job, the request visited for good, in one
-- atomic step. Returns ack's status.
local status = ack()
if status == 1 then
  redis.call('ZADD', KEYS[7], 0, ARGV[4])
  touch()
end
return status
