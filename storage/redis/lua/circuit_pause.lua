-- Pause: a worker was told Retry-After; no worker sends to the domain
-- before ARGV[9] (Unix µs). The pause only ever grows. Returns {1}.
local untilUs = tonumber(ARGV[9])
local cur = tonumber(redis.call('HGET', stateKey, 'p')) or 0
if untilUs > cur then
  redis.call('HSET', stateKey, 'p', untilUs)
  local keep = retention + math.ceil((untilUs - now) / 1000)
  local ttl = redis.call('PTTL', stateKey)
  if ttl < keep then
    redis.call('PEXPIRE', stateKey, keep)
  end
end
return { 1 }
