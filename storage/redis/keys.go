package redis

// The keys of one crawl. The crawl id sits in a Redis Cluster hash tag, so
// all of a crawl's keys live in one slot (the scripts touch several at
// once) and two crawls never share a key. Config.Shards spreads a crawl over
// several tags, each holding the layout below for its share of the jobs
// and domains (shards.go).
//
// The queue (Queue; lua/prelude.lua and the queue scripts):
//
//	<ns>:{<crawl>}:q:ready     ZSET  id → eligible time + lane offset (ms); lowest is claimed first
//	<ns>:{<crawl>}:q:delayed   ZSET  id → eligible time (ms): not claimable yet
//	<ns>:{<crawl>}:q:inflight  ZSET  id → lease deadline (ms)
//	<ns>:{<crawl>}:q:dead      ZSET  id → time of death (ms)
//	<ns>:{<crawl>}:q:jobs      HASH  id → job record (JSON, see record)
//	<ns>:{<crawl>}:q:leases    HASH  id → token of the claim holding the job ("~token": expired, not yet re-claimed)
//
// A job's id is in exactly one of the four sorted sets; its record lives in
// jobs until it is acked (or dropped from the dead letters). Every script
// that changes something refreshes the TTL of all six keys.
//
// Colly's storage (lua/colly_*.lua, with the queue's prelude): the
// queue's six, then c:visited, c:cookies and c:run as KEYS[7] to KEYS[9];
// CollyStorage's doc has their layout.
//
// The shared circuits (BreakerStore; lua/circuit_*.lua), per domain:
//
//	<ns>:{<crawl>}:b:s:<domain>  HASH  s state, g generation, r retry-at (µs), c consecutive
//	                                   failures, f window failures, k probes passed, t trips, n probe ids,
//	                                   q closed tickets handed out (their Seq)
//	<ns>:{<crawl>}:b:w:<domain>  LIST  the window: "<class>:<latency ns>:<seq>", in the order requests left
//	<ns>:{<crawl>}:b:p:<domain>  ZSET  probe id → lease deadline (µs)
//
// TTL: Config.Retention after the last change, plus the rest of the cooldown
// while open. A closed circuit's Allow writes only q (making the state key,
// with the retention's TTL, for a domain never seen).
//
// The checkpoint (lua/cp_*.lua): cp:recs, cp:seq, cp:meta, cp:info and
// cp:s1..s6; OpenCheckpoint's doc has their layout.
const (
	keyReady = iota
	keyDelayed
	keyInflight
	keyDead
	keyJobs
	keyLeases
	numKeys
)

// queueKeys returns the queue's keys under one shard's prefix (see
// shardPrefixes).
func queueKeys(prefix string) []string {
	p := prefix + "q:"
	return []string{
		keyReady:    p + "ready",
		keyDelayed:  p + "delayed",
		keyInflight: p + "inflight",
		keyDead:     p + "dead",
		keyJobs:     p + "jobs",
		keyLeases:   p + "leases",
	}
}

// CollyStorage's keys, after the queue's.
const (
	keyVisited = numKeys + iota
	keyCookies
	keyRun
)
