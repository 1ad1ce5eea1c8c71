package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/breakwater-crawl/breakwater/storage"
)

// The outputs (storage.OutputStore, for extensions/checkpoint's Sink),
// next to the checkpoint's keys:
//
//	<ns>:{<crawl>}:cp:o:<len(output)>:<output>:ids        HASH id → "<pos>|<log key>"
//	<ns>:{<crawl>}:cp:o:<len(output)>:<output>:p:<part>   LIST "<id>|<data>", index = Pos

// outputKey is output's key ending in suffix: ":ids", or ":p:<part>".
func (cp *checkpointStore) outputKey(output, suffix string) string {
	return strings.TrimSuffix(cp.keys[0], "recs") + "o:" + strconv.Itoa(len(output)) + ":" + output + suffix
}

// PutOutput implements storage.OutputStore: a script per 500 records,
// each atomic, with the entries of its records (the rest with the last).
// A record and its entries are so always committed together; a failure
// after the first script leaves the scripts before it committed.
func (cp *checkpointStore) PutOutput(entries []storage.OutputEntry, recs ...storage.Record) ([]storage.OutputEntry, error) {
	for i := range recs {
		if err := recs[i].Validate(); err != nil && !cp.closed.Load() {
			return nil, err
		}
	}
	for i := range entries {
		if err := entries[i].Validate(); err != nil && !cp.closed.Load() {
			return nil, err
		}
	}
	if len(recs) <= putBatch {
		return cp.putOutput(entries, recs)
	}
	chunkOf := make(map[uint64]int, len(recs)) // record ID → its chunk
	for i, r := range recs {
		chunkOf[r.ID] = i / putBatch
	}
	last := (len(recs) - 1) / putBatch
	per := make([][]storage.OutputEntry, last+1)
	for _, e := range entries {
		c, ok := chunkOf[e.ID]
		if !ok {
			c = last
		}
		per[c] = append(per[c], e)
	}
	var took []storage.OutputEntry
	for c := range per {
		t, err := cp.putOutput(per[c], recs[c*putBatch:min((c+1)*putBatch, len(recs))])
		if err != nil {
			return nil, err
		}
		took = append(took, t...)
	}
	return took, nil
}

// putOutput is one PutOutput script.
func (cp *checkpointStore) putOutput(entries []storage.OutputEntry, recs []storage.Record) ([]storage.OutputEntry, error) {
	now := cp.s.now().UTC()
	keys := append([]string(nil), cp.keys...)
	index := map[string]int{}
	keyIndex := func(k string) int {
		i, ok := index[k]
		if !ok {
			keys = append(keys, k)
			i = len(keys) // Lua's KEYS count from 1
			index[k] = i
		}
		return i
	}
	args := recordArgs(append(make([]any, 0, 2+3*len(recs)+4*len(entries)), cp.s.Retention.Milliseconds(), len(recs)), recs, now)
	for _, e := range entries {
		args = append(args, keyIndex(cp.outputKey(e.Output, ":ids")), keyIndex(cp.outputKey(e.Output, ":p:"+e.Part)), idKey(e.ID), e.Data)
	}
	var pos []int64
	err := cp.do("put output", func(ctx context.Context) (err error) {
		pos, err = scriptCPOut.Run(ctx, cp.client, keys, args...).Int64Slice()
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(pos) != len(entries) {
		return nil, fmt.Errorf("breakwater/redis: put output on crawl %q: %w: the script answered %d positions for %d entries", cp.crawl, storage.ErrCorrupt, len(pos), len(entries))
	}
	var took []storage.OutputEntry
	for i, e := range entries {
		if pos[i] >= 0 {
			e.Pos = uint64(pos[i])
			took = append(took, e)
		}
	}
	return took, nil
}

// ScanOutput implements storage.OutputStore: 256 entries per round trip.
func (cp *checkpointStore) ScanOutput(output, part string, fn func(storage.OutputEntry) error) error {
	key := cp.outputKey(output, ":p:"+part)
	for from := int64(0); ; from += scanChunk {
		var vals []string
		err := cp.do("scan output", func(ctx context.Context) (err error) {
			vals, err = cp.client.LRange(ctx, key, from, from+scanChunk-1).Result()
			return err
		})
		if err != nil {
			return err
		}
		for i, v := range vals {
			idS, data, ok := strings.Cut(v, "|")
			id, err := strconv.ParseUint(idS, 16, 64)
			if !ok || err != nil {
				return fmt.Errorf("breakwater/redis: checkpoint of crawl %q: %w: output entry %d of %s is %.60q", cp.crawl, storage.ErrCorrupt, from+int64(i), key, v)
			}
			if err := fn(storage.OutputEntry{Output: output, Part: part, ID: id, Data: []byte(data), Pos: uint64(from) + uint64(i)}); err != nil {
				return err
			}
		}
		if len(vals) < scanChunk {
			return nil
		}
	}
}

var _ storage.OutputStore = (*checkpointStore)(nil)
