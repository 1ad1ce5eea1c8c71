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
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
	goredis "github.com/redis/go-redis/v9"
)

// CheckpointFormat is the checkpoint key layout's version this build
// writes; OpenCheckpoint refuses a newer one with storage.ErrNewerFormat.
const CheckpointFormat = 1

// checkpointStore is the storage.Store OpenCheckpoint returns.
type checkpointStore struct {
	client goredis.UniversalClient
	crawl  string
	keys   []string
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
func OpenCheckpoint(client goredis.UniversalClient, crawlID string, opts ...Option) (storage.Store, error) {
	s, err := build(client, crawlID, opts)
	if err != nil {
		return nil, err
	}
	p := s.Namespace + ":{" + crawlID + "}:cp:"
	keys := []string{p + "recs", p + "seq", p + "meta", p + "info"}
	for st := storage.Pending; st <= storage.Dead; st++ {
		keys = append(keys, p+"s"+strconv.Itoa(int(st)))
	}
	cp := &checkpointStore{client: client, crawl: crawlID, keys: keys, s: s}
	ctx, cancel := callContext(context.Background(), s.CallTimeout)
	defer cancel()
	res, err := scriptCPOpen.Run(ctx, client, keys, s.Retention.Milliseconds(), CheckpointFormat).Slice()
	if err != nil {
		return nil, cp.wrap(ctx, "open checkpoint", err)
	}
	if len(res) != 2 {
		return nil, fmt.Errorf("breakwater/redis: open checkpoint of crawl %q: %w: the script answered %d values", crawlID, storage.ErrCorrupt, len(res))
	}
	if toInt(res[0]) != 1 {
		return nil, fmt.Errorf("breakwater/redis: open checkpoint of crawl %q: %w: key %v holds something else; use another namespace or crawl id",
			crawlID, storage.ErrNotCheckpoint, res[1])
	}
	if f := toInt(res[1]); f > CheckpointFormat {
		return nil, fmt.Errorf("breakwater/redis: open checkpoint of crawl %q: %w: format %d, this build reads up to %d; upgrade Breakwater to resume it",
			crawlID, storage.ErrNewerFormat, f, CheckpointFormat)
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

// Put implements storage.Store: every record is validated first, then
// written in batches of 500, each atomic.
func (cp *checkpointStore) Put(recs ...storage.Record) error {
	if cp.closed.Load() {
		return storage.ErrClosed
	}
	for i := range recs {
		if err := backend.CheckRecord(&recs[i]); err != nil {
			return err
		}
	}
	now := cp.s.now().UTC()
	ctx, cancel := callContext(context.Background(), cp.s.CallTimeout)
	defer cancel()
	for start := 0; start < len(recs); start += putBatch {
		batch := recs[start:min(start+putBatch, len(recs))]
		args := append(make([]any, 0, 1+3*len(batch)), cp.s.Retention.Milliseconds())
		for _, r := range batch {
			upd := r.Updated
			if upd.IsZero() {
				upd = now
			}
			b, err := json.Marshal(stored{ID: idKey(r.ID), URL: r.URL, Attempts: r.Attempts, LastError: r.LastError,
				NotBefore: nanos(r.NotBefore), Request: r.Request, Updated: nanos(upd)})
			if err != nil {
				return fmt.Errorf("breakwater/redis: put on crawl %q: record %d: %w", cp.crawl, r.ID, err)
			}
			args = append(args, idKey(r.ID), int(r.State), b)
		}
		if err := scriptCPPut.Run(ctx, cp.client, cp.keys, args...).Err(); err != nil {
			return cp.wrap(ctx, "put", err)
		}
	}
	return nil
}

// Get implements storage.Store.
func (cp *checkpointStore) Get(id uint64) (storage.Record, bool, error) {
	if cp.closed.Load() {
		return storage.Record{}, false, storage.ErrClosed
	}
	ctx, cancel := callContext(context.Background(), cp.s.CallTimeout)
	defer cancel()
	v, err := cp.client.HGet(ctx, cp.keys[0], idKey(id)).Result()
	if errors.Is(err, goredis.Nil) {
		return storage.Record{}, false, nil
	}
	if err != nil {
		return storage.Record{}, false, cp.wrap(ctx, "get", err)
	}
	r, err := cp.decodeValue(v)
	if err == nil && r.ID != id {
		err = fmt.Errorf("breakwater/redis: checkpoint of crawl %q: %w: record %016x stored under %016x", cp.crawl, storage.ErrCorrupt, r.ID, id)
	}
	return r, err == nil, err
}

// Scan implements storage.Store: 256 records per round trip.
func (cp *checkpointStore) Scan(fn func(storage.Record) error, states ...storage.State) error {
	if err := backend.CheckStates(states); err != nil {
		return err
	}
	var after uint64
	for {
		if cp.closed.Load() {
			return storage.ErrClosed
		}
		args := []any{cp.s.Retention.Milliseconds(), after, scanChunk}
		for st := storage.Pending; st <= storage.Dead; st++ {
			if len(states) == 0 || slices.Contains(states, st) {
				args = append(args, int(st))
			}
		}
		ctx, cancel := callContext(context.Background(), cp.s.CallTimeout)
		vals, err := scriptCPScan.Run(ctx, cp.client, cp.keys, args...).StringSlice()
		if err != nil {
			err = cp.wrap(ctx, "scan", err)
		}
		cancel()
		if err != nil {
			return err
		}
		for _, v := range vals {
			r, err := cp.decodeValue(v)
			if err != nil {
				return err
			}
			after = r.Seq
			if err := fn(r); err != nil {
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
	if cp.closed.Load() {
		return nil, storage.ErrClosed
	}
	ctx, cancel := callContext(context.Background(), cp.s.CallTimeout)
	defer cancel()
	cmds := make([]*goredis.IntCmd, 0, 6)
	_, err := cp.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, k := range cp.keys[4:] {
			cmds = append(cmds, p.ZCard(ctx, k))
		}
		return nil
	})
	if err != nil {
		return nil, cp.wrap(ctx, "counts", err)
	}
	var t backend.Tally
	for i, c := range cmds {
		t[int(storage.Pending)+i] = int(c.Val())
	}
	return t.Map(), nil
}

// SetMeta implements storage.Store.
func (cp *checkpointStore) SetMeta(key string, value []byte) error {
	if err := backend.CheckMetaKey(key); err != nil {
		return err
	}
	if cp.closed.Load() {
		return storage.ErrClosed
	}
	ctx, cancel := callContext(context.Background(), cp.s.CallTimeout)
	defer cancel()
	if err := scriptCPMeta.Run(ctx, cp.client, cp.keys, cp.s.Retention.Milliseconds(), key, value).Err(); err != nil {
		return cp.wrap(ctx, "set meta", err)
	}
	return nil
}

// Meta implements storage.Store.
func (cp *checkpointStore) Meta(key string) ([]byte, bool, error) {
	if cp.closed.Load() {
		return nil, false, storage.ErrClosed
	}
	ctx, cancel := callContext(context.Background(), cp.s.CallTimeout)
	defer cancel()
	v, err := cp.client.HGet(ctx, cp.keys[2], key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, cp.wrap(ctx, "meta", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// Flush implements storage.Store: nothing is buffered.
func (cp *checkpointStore) Flush() error {
	if cp.closed.Load() {
		return storage.ErrClosed
	}
	return nil
}

// Close implements storage.Store; client and data are left as they are.
func (cp *checkpointStore) Close() error {
	cp.closed.Store(true)
	return nil
}

// decodeValue reads a stored value: "<seq>|<state>|<JSON>".
func (cp *checkpointStore) decodeValue(v string) (storage.Record, error) {
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
	var s stored
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return bad("bad JSON (" + err.Error() + ")")
	}
	id, err := strconv.ParseUint(s.ID, 16, 64)
	if err != nil {
		return bad("bad id")
	}
	return storage.Record{ID: id, URL: s.URL, State: storage.State(st), Attempts: s.Attempts, LastError: s.LastError,
		NotBefore: fromNanos(s.NotBefore), Request: s.Request, Seq: seq, Updated: fromNanos(s.Updated)}, nil
}

func (cp *checkpointStore) wrap(ctx context.Context, op string, err error) error {
	if strings.HasPrefix(err.Error(), "WRONGTYPE") {
		return fmt.Errorf("breakwater/redis: %s on crawl %q: %w: a checkpoint key holds something else (%v)", op, cp.crawl, storage.ErrNotCheckpoint, err)
	}
	return wrapErr(ctx, cp.crawl, op, err)
}

// idKey is an ID in 16 hex digits (a checkpoint record's, a job's).
func idKey(id uint64) string { return fmt.Sprintf("%016x", id) }

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
