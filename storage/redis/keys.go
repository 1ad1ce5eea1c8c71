package redis

// The keys of one crawl, under its Cluster hash tag; docs/redis.md has
// the layout of each. The queue's six come first, in this order, as the
// scripts' KEYS; Colly's storage adds c:visited, c:cookies and c:run.
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
