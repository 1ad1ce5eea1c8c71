package redis

// The keys of one crawl's queue. The crawl id sits in a Redis Cluster hash
// tag, so all of a crawl's keys live in one slot (the scripts touch several
// at once) and two crawls never share a key:
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
const (
	keyReady = iota
	keyDelayed
	keyInflight
	keyDead
	keyJobs
	keyLeases
	numKeys
)

func queueKeys(namespace, crawl string) []string {
	p := namespace + ":{" + crawl + "}:q:"
	return []string{
		keyReady:    p + "ready",
		keyDelayed:  p + "delayed",
		keyInflight: p + "inflight",
		keyDead:     p + "dead",
		keyJobs:     p + "jobs",
		keyLeases:   p + "leases",
	}
}
