package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	goredis "github.com/redis/go-redis/v9"
)

// CheckpointFormat is the checkpoint key layout's version this build
// writes; OpenCheckpoint refuses a newer one with storage.ErrNewerFormat.
const CheckpointFormat = 1

// checkpointStore is the storage.Store OpenCheckpoint returns.
type checkpointStore struct {
	client goredis.UniversalClient
	crawl  string
	keys   []string // recs, seq, meta, info, then one sorted set per State
	s      settings
	closed atomic.Bool
}

const (
	putBatch  = 500
	scanChunk = 256
)

// OpenCheckpoint opens (creating it if need be) the checkpoint of the
// crawl crawlID on client: extensions/checkpoint's storage.Store for a
// crawl spread over several machines. Keys that hold something else are
// refused with storage.ErrNotCheckpoint, a newer format with
// storage.ErrNewerFormat. Every method is one round trip, nothing is
// buffered, and concurrent Puts of one record are applied in some order.
// Close leaves the client open and the data in Redis. It is safe for
// concurrent use.
func OpenCheckpoint(client goredis.UniversalClient, crawlID string, c Config) (storage.Store, error) {
	s, err := build(client, crawlID, c)
	if err != nil {
		return nil, err
	}
	p := s.Namespace + ":{" + crawlID + "}:cp:"
	keys := []string{p + "recs", p + "seq", p + "meta", p + "info"}
	for st := storage.Pending; st <= storage.Dead; st++ {
		keys = append(keys, p+"s"+strconv.Itoa(int(st)))
	}
	cp := &checkpointStore{client: client, crawl: crawlID, keys: keys, s: s}
	var res []any
	err = cp.do("open checkpoint", func(ctx context.Context) (err error) {
		res, err = scriptCPOpen.Run(ctx, client, keys, s.Retention.Milliseconds(), CheckpointFormat).Slice()
		return err
	})
	fail := func(err error, format string, args ...any) error {
		return fmt.Errorf("breakwater/redis: open checkpoint of crawl %q: %w: "+format, append([]any{crawlID, err}, args...)...)
	}
	switch {
	case err != nil:
		return nil, err
	case len(res) != 2:
		return nil, fail(storage.ErrCorrupt, "the script answered %d values", len(res))
	case toInt(res[0]) != 1:
		return nil, fail(storage.ErrNotCheckpoint, "key %v holds something else; use another namespace or crawl id", res[1])
	case toInt(res[1]) > CheckpointFormat:
		return nil, fail(storage.ErrNewerFormat, "format %d, this build reads up to %d; upgrade Breakwater to resume it", toInt(res[1]), CheckpointFormat)
	}
	return cp, nil
}

// stored is a Record in the recs hash after its "<seq>|<state>|" header.
type stored struct {
	ID        string `json:"id"` // 16 hex digits, as the hash field
	URL       string `json:"u,omitempty"`
	Attempts  int    `json:"a,omitempty"`
	LastError string `json:"e,omitempty"`
	NotBefore int64  `json:"nb,omitempty"`
	Request   []byte `json:"r,omitempty"`
	Updated   int64  `json:"up,omitempty"`
}

// recordArgs appends each record's ID, state and stored form, as the put
// scripts take them, Updated now where it is zero.
func recordArgs(args []any, recs []storage.Record, now time.Time) []any {
	for _, r := range recs {
		if r.Updated.IsZero() {
			r.Updated = now
		}
		b, _ := json.Marshal(stored{ID: idKey(r.ID), URL: r.URL, Attempts: r.Attempts, LastError: r.LastError,
			NotBefore: unix(r.NotBefore, time.Time.UnixNano), Request: r.Request, Updated: unix(r.Updated, time.Time.UnixNano)}) // cannot fail
		args = append(args, idKey(r.ID), int(r.State), b)
	}
	return args
}

// do runs call with the call timeout unless the store is closed; a
// failure is wrapped, a WRONGTYPE one as storage.ErrNotCheckpoint.
func (cp *checkpointStore) do(op string, call func(context.Context) error) error {
	if cp.closed.Load() {
		return storage.ErrClosed
	}
	ctx, cancel := callContext(context.Background(), cp.s.CallTimeout)
	defer cancel()
	err := call(ctx)
	switch {
	case err == nil || errors.Is(err, goredis.Nil):
		return err
	case strings.HasPrefix(err.Error(), "WRONGTYPE"):
		return fmt.Errorf("breakwater/redis: %s on crawl %q: %w: a checkpoint key holds something else (%v)", op, cp.crawl, storage.ErrNotCheckpoint, err)
	}
	return wrapErr(ctx, cp.crawl, op, err)
}

// Put implements storage.Store: every record is validated first, then
// written in batches of 500, each atomic.
func (cp *checkpointStore) Put(recs ...storage.Record) error {
	for i := range recs {
		if err := recs[i].Validate(); err != nil && !cp.closed.Load() { // closed: ErrClosed first
			return err
		}
	}
	now := cp.s.now().UTC()
	return cp.do("put", func(ctx context.Context) error {
		for batch := range slices.Chunk(recs, putBatch) {
			args := recordArgs(append(make([]any, 0, 2+3*len(batch)), cp.s.Retention.Milliseconds(), len(batch)), batch, now)
			if err := scriptCPOut.Run(ctx, cp.client, cp.keys, args...).Err(); err != nil { // records, no entries
				return err
			}
		}
		return nil
	})
}

// Get implements storage.Store.
func (cp *checkpointStore) Get(id uint64) (storage.Record, bool, error) {
	var v string
	err := cp.do("get", func(ctx context.Context) (err error) {
		v, err = cp.client.HGet(ctx, cp.keys[0], idKey(id)).Result()
		return err
	})
	if err != nil {
		return storage.Record{}, false, ignoreNil(err)
	}
	r, err := cp.decodeValue(v)
	if err == nil && r.ID != id {
		err = fmt.Errorf("breakwater/redis: checkpoint of crawl %q: %w: record %016x stored under %016x", cp.crawl, storage.ErrCorrupt, r.ID, id)
	}
	return r, err == nil, err
}

// Scan implements storage.Store: 256 records per round trip.
func (cp *checkpointStore) Scan(fn func(storage.Record) error, states ...storage.State) error {
	if len(states) == 0 {
		states = storage.States()
	}
	args := []any{cp.s.Retention.Milliseconds(), uint64(0), scanChunk} // then each state once
	for _, st := range states {
		if !st.Valid() {
			return fmt.Errorf("%w: cannot scan for %v; use one of Pending..Dead", storage.ErrInvalid, st)
		}
		if !slices.Contains(args[3:], any(int(st))) {
			args = append(args, int(st))
		}
	}
	for {
		var vals []string
		err := cp.do("scan", func(ctx context.Context) (err error) {
			vals, err = scriptCPScan.Run(ctx, cp.client, cp.keys, args...).StringSlice()
			return err
		})
		if err != nil {
			return err
		}
		for _, v := range vals {
			r, err := cp.decodeValue(v)
			if err == nil {
				args[1] = r.Seq
				err = fn(r)
			}
			if err != nil {
				return err
			}
		}
		if len(vals) < scanChunk {
			return nil
		}
	}
}

// Counts implements storage.Store: one pipelined round trip.
func (cp *checkpointStore) Counts() (map[storage.State]int, error) {
	counts := make(map[storage.State]int)
	err := cp.do("counts", func(ctx context.Context) error {
		clear(counts) // a retry counts afresh
		cmds, err := cp.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, k := range cp.keys[4:] {
				p.ZCard(ctx, k)
			}
			return nil
		})
		for i, c := range cmds {
			if n := int(c.(*goredis.IntCmd).Val()); n > 0 {
				counts[storage.Pending+storage.State(i)] = n
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}

// SetMeta implements storage.Store.
func (cp *checkpointStore) SetMeta(key string, value []byte) error {
	if err := storage.ValidateMetaKey(key); err != nil {
		return err
	}
	return cp.do("set meta", func(ctx context.Context) error {
		return scriptCPMeta.Run(ctx, cp.client, cp.keys, cp.s.Retention.Milliseconds(), key, value).Err()
	})
}

// Meta implements storage.Store.
func (cp *checkpointStore) Meta(key string) ([]byte, bool, error) {
	v := []byte{}
	err := cp.do("meta", func(ctx context.Context) error {
		b, err := cp.client.HGet(ctx, cp.keys[2], key).Bytes()
		if b != nil {
			v = b
		}
		return err
	})
	if err != nil {
		return nil, false, ignoreNil(err)
	}
	return v, true, nil
}

// ignoreNil turns go-redis's "no such field" into nil.
func ignoreNil(err error) error {
	if errors.Is(err, goredis.Nil) {
		return nil
	}
	return err
}

// Flush implements storage.Store: nothing is buffered.
func (cp *checkpointStore) Flush() error {
	return cp.do("flush", func(context.Context) error { return nil })
}

// Close implements storage.Store; client and data are left as they are.
func (cp *checkpointStore) Close() error {
	cp.closed.Store(true)
	return nil
}

// decodeValue reads a stored value: "<seq>|<state>|<JSON>".
func (cp *checkpointStore) decodeValue(v string) (storage.Record, error) {
	var s stored
	bad := func(why string) (storage.Record, error) {
		return storage.Record{}, fmt.Errorf("breakwater/redis: checkpoint of crawl %q: %w: %s in %.120q", cp.crawl, storage.ErrCorrupt, why, v)
	}
	seqS, rest, ok1 := strings.Cut(v, "|")
	stS, body, ok2 := strings.Cut(rest, "|")
	if !ok1 || !ok2 {
		return bad("no <seq>|<state>| header")
	}
	seq, err1 := strconv.ParseUint(seqS, 10, 64)
	st, err2 := strconv.Atoi(stS)
	if err1 != nil || err2 != nil || !storage.State(st).Valid() {
		return bad("bad header")
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return bad("bad JSON (" + err.Error() + ")")
	}
	id, err := strconv.ParseUint(s.ID, 16, 64)
	if err != nil {
		return bad("bad id")
	}
	return storage.Record{ID: id, URL: s.URL, State: storage.State(st), Attempts: s.Attempts, LastError: s.LastError,
		NotBefore: fromUnix(s.NotBefore, utcNanos), Request: s.Request, Seq: seq, Updated: fromUnix(s.Updated, utcNanos)}, nil
}

// idKey is an ID in 16 hex digits (a checkpoint record's, a job's).
func idKey(id uint64) string { return fmt.Sprintf("%016x", id) }

func utcNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
