package redis

// The keys of one crawl (docs/redis.md): the queue's six first, in this
// order, as the scripts' KEYS; Colly's storage adds three.
const (
	keyReady = iota
	keyDelayed
	keyInflight
	keyDead
	keyJobs
	keyLeases
	numKeys
)

// queueKeys returns the queue's keys under one shard's prefix.
func queueKeys(prefix string) []string {
	var out []string
	for _, k := range []string{"ready", "delayed", "inflight", "dead", "jobs", "leases"} {
		out = append(out, prefix+"q:"+k)
	}
	return out
}

// CollyStorage's keys, after the queue's.
const (
	keyVisited = numKeys + iota
	keyCookies
	keyRun
)
