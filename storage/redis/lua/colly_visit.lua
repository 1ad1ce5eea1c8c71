-- IsVisited and Visited (CollyStorage): the atomic check-and-set Colly's
-- two calls lack. Claims the request unless it is done, claimed by a live
-- fetch, or owned by a job of the queue (which hands it to one worker).
-- ARGV[4] request id, ARGV[5] claim deadline (ms).
-- Returns 0 claimed now (fetch it), 1 visited (do not).
local visited, id = KEYS[7], ARGV[4]
local score = tonumber(redis.call('ZSCORE', visited, id))
if score and (score == 0 or score > now) then
  return 1
end
if redis.call('HEXISTS', jobs, id) == 1 then
  return 1
end
redis.call('ZADD', visited, ARGV[5], id)
touch()
return 0
