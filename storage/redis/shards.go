package redis

import (
	"hash/fnv"
	"strconv"

	"github.com/breakwater-crawl/breakwater/internal/keyslot"
)

// MaxShards is the most hash slots Config.Shards spreads a crawl over.
const MaxShards = 256

// A crawl's shards: shard i of n lives under the tag "{<crawl>/<i>.<k>}:s:",
// where k is the first counter that puts the tag's slot in the middle of
// the i-th n-th of the 16384 slots, so n shards land evenly on the masters
// of an evenly split Cluster. Every worker computes the same tags from the
// crawl id and n; ":s:" keeps them apart from an unsharded crawl's keys.

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
