-- Release (CollyStorage): a request fetched outside the queue failed or was
-- refused; drop its claim so that it may be fetched when found again. A
-- done request stays done. ARGV[4] request id. Returns 1 released, 0 not.
local score = tonumber(redis.call('ZSCORE', KEYS[7], ARGV[4]))
if score and score ~= 0 then
  redis.call('ZREM', KEYS[7], ARGV[4])
  touch()
  return 1
end
return 0
