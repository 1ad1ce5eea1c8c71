-- Put: insert or replace records, in order (a later duplicate wins).
-- ARGV[2..] triplets: id, state (1..6), record JSON.
-- A record keeps the Seq of its first Put; a new one takes the next.
for i = 2, #ARGV, 3 do
  local id, state, body = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local old = redis.call('HGET', recs, id)
  local seq
  if old then
    local oldState
    seq, oldState = header(old)
    if oldState ~= tonumber(state) then
      redis.call('ZREM', stateKey(oldState), id)
    end
  else
    seq = redis.call('INCR', seqKey)
  end
  redis.call('HSET', recs, id, seq .. '|' .. state .. '|' .. body)
  redis.call('ZADD', stateKey(state), seq, id)
end
touch()
return #ARGV
