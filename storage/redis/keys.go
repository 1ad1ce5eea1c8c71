package redis

import (
	"hash/fnv"
	"strconv"

	"github.com/breakwater-crawl/breakwater/storage/redis/internal/keyslot"
)

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
func queueKeys(p string) []string {
	return []string{p + "q:ready", p + "q:delayed", p + "q:inflight", p + "q:dead", p + "q:jobs", p + "q:leases"}
}

// CollyStorage's keys, after the queue's.
const (
	keyVisited = numKeys + iota
	keyCookies
	keyRun
)

// MaxShards is the most hash slots Config.Shards spreads a crawl over.
const MaxShards = 256

// shardPrefixes returns the key prefix of each of the crawl's n shards.
// Shard i's tag is "{<crawl>/<i>.<k>}", k the first counter that puts its
// slot mid-way in the i-th n-th of the slots, so the shards land evenly on
// the masters of an evenly split Cluster.
func shardPrefixes(namespace, crawl string, n int) []string {
	if n <= 1 {
		return []string{namespace + ":{" + crawl + "}:"}
	}
	out := make([]string, n)
	width := keyslot.Slots / n
	for i := range out {
		lo := i*width + width/4
		hi := i*width + width*3/4
		for k := 0; ; k++ {
			tag := crawl + "/" + strconv.Itoa(i) + "." + strconv.Itoa(k)
			if s := int(keyslot.CRC16(tag) % keyslot.Slots); s >= lo && s < hi {
				out[i] = namespace + ":{" + tag + "}:s:"
				break
			}
		}
	}
	return out
}

// shardOf returns the shard of key (a job's ID, a domain) among n.
func shardOf(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}
