-- Shared head of every checkpoint script (checkpoint.go prepends it). A
-- crawl's storage.Store: one record per URL, kept in the frontier order
-- (Seq) and findable by state.
--
-- KEYS[1] recs  HASH id (16 hex digits) -> "<seq>|<state>|<record JSON>"
-- KEYS[2] seq   STRING the last Seq handed out (never reused)
-- KEYS[3] meta  HASH run metadata key -> value
-- KEYS[4] info  HASH format -> the layout's version
-- KEYS[5..10]   ZSET per state 1..6 (pending .. dead): id -> seq
--
-- ARGV[1] retention (ms): TTL given to every key on each change
-- ARGV[2..] the script's own arguments
local recs, seqKey, meta, info = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local retention = ARGV[1]

local function stateKey(state)
  return KEYS[4 + tonumber(state)]
end

-- header reads the seq and state a stored value starts with.
local function header(v)
  local seq, state = string.match(v, '^(%d+)|(%d)|')
  return tonumber(seq), tonumber(state)
end

local function touch()
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], retention)
  end
end

-- putRecord inserts or replaces one record; it keeps the Seq of its first
-- Put, a new one takes the next.
local function putRecord(id, state, body)
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
