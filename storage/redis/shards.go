package redis

import (
	"hash/fnv"
	"strconv"

	"github.com/breakwater-crawl/breakwater/internal/keyslot"
)

// MaxShards is the most hash slots Config.Shards spreads a crawl over.
const MaxShards = 256

// A crawl's shards. With one shard (the default) every key of a crawl
// starts "<ns>:{<crawl>}:" and the whole crawl lives in one Redis Cluster
// hash slot, so one master serves it. With n > 1 the frontier and the
// circuits are spread over n hash tags, each its own slot:
//
//	<ns>:{<crawl>/<i>.<k>}:s:q:ready, …:s:c:visited, …:s:b:s:<domain>, …
//
// for shard i in 0..n-1, where k is the first counter that puts the tag's
// slot in the middle half of the i-th n-th of the 16384 slots. Every
// worker computes the same tags from the crawl id and n alone, and
// because `redis-cli --cluster create` and an even reshard give each
// master a contiguous, equal run of slots, n shards over m masters put
// n/m shards on each (n = m: one each). The ":s:" after the tag keeps
// the keys of shard i of crawl A apart from those of an unsharded crawl
// whose id happens to be "A/i.k". A job (and Colly request) lives in the
// shard of a hash of its ID, a domain's circuit in the shard of a hash of
// the domain; the checkpoint stays under the crawl's own tag.

// shardPrefixes returns the key prefix of each of the crawl's n shards.
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
