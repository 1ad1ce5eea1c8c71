// Package idle keeps the records of domains compacted after the idle TTL
// (docs/design.md, "Broad crawls"), their totals and the sweep periods.
package idle

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/packmap"
)

const (
	numClasses = int(circuit.Excluded) + 1
	shards     = 64 // locks the compacted domains are spread over
)

// Record is a compacted domain: what its decisions and stats need. It is
// kept encoded as varints, some 40 bytes against 216 as a struct.
type Record struct {
	Counts                                    [numClasses]int64
	Refused, Trips, Streak, HealthyRun, Fails int64
	NetFails, Pauses, Successes, Tracked      int64
	BaseFlight, SlowN, SlowNext               int64
	Median, Baseline, Timeout, PausedFor      int64 // nanoseconds
	LastOK, LastSeen                          int64 // unix nanos; 0: never
	Rate                                      float32
}

// numbers lists r's fields but the times and Rate, in their encoded order.
func (r *Record) numbers() []*int64 {
	p := []*int64{&r.Refused, &r.Trips, &r.Streak, &r.HealthyRun, &r.Fails, &r.NetFails, &r.Pauses, &r.Successes,
		&r.Tracked, &r.BaseFlight, &r.SlowN, &r.SlowNext, &r.Median, &r.Baseline, &r.Timeout, &r.PausedFor}
	for c := range r.Counts {
		p = append(p, &r.Counts[c])
	}
	return p
}

// Totals sums compacted domains' records.
type Totals struct {
	Domains int
	Counts  [numClasses]int64
	Refused int64
	Trips   int64
	Pauses  int64
}

func (t *Totals) add(r *Record, sign int64) {
	d := Totals{Domains: int(sign), Refused: sign * r.Refused, Trips: sign * r.Trips, Pauses: sign * r.Pauses}
	for c := range numClasses {
		d.Counts[c] = sign * r.Counts[c]
	}
	t.sum(d)
}

func (t *Totals) sum(s Totals) {
	t.Domains += s.Domains
	for c := range numClasses {
		t.Counts[c] += s.Counts[c]
	}
	t.Refused += s.Refused
	t.Trips += s.Trips
	t.Pauses += s.Pauses
}

// Set holds the compacted domains by name, in shards. Init it before use.
type Set struct {
	seed   maphash.Seed
	shards [shards]Shard
}

// Shard holds some of a Set's domains. Its caller locks it around the rest.
type Shard struct {
	sync.Mutex
	m    packmap.Map // name → its record, encoded
	tot  Totals
	base int64 // unix nanos: records keep times relative to it
}

// Init readies s, its records' times relative to now.
func (s *Set) Init(now time.Time) {
	s.seed = maphash.MakeSeed()
	for i := range s.shards {
		s.shards[i].base = now.UnixNano()
	}
}

// Shard returns the shard that holds name, unlocked.
func (s *Set) Shard(name string) *Shard {
	return &s.shards[maphash.String(s.seed, name)%shards]
}

// Put keeps r as name's record.
func (sh *Shard) Put(name string, r *Record) {
	sh.m.Set(name, r.Encode(sh.base))
	sh.tot.add(r, +1)
}

// Get returns name's record, if it is compacted.
func (sh *Shard) Get(name string) (Record, bool) {
	enc, ok := sh.m.Get(name)
	if !ok {
		return Record{}, false
	}
	return Decode(enc, sh.base), true
}

// Take removes name's record and returns it, if it is compacted.
func (sh *Shard) Take(name string) (Record, bool) {
	r, ok := sh.Get(name)
	if ok {
		sh.m.Delete(name)
		sh.tot.add(&r, -1)
	}
	return r, ok
}

// Get returns name's record, if it is compacted.
func (s *Set) Get(name string) (Record, bool) {
	sh := s.Shard(name)
	sh.Lock()
	defer sh.Unlock()
	return sh.Get(name)
}

// Range calls f for every compacted domain, one shard locked at a time.
func (s *Set) Range(f func(name string, r *Record)) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.Lock()
		sh.m.Range(func(name, enc string) bool {
			r := Decode(enc, sh.base)
			f(name, &r)
			return true
		})
		sh.Unlock()
	}
}

// Totals sums every compacted domain.
func (s *Set) Totals() (t Totals) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.Lock()
		st := sh.tot
		sh.Unlock()
		t.sum(st)
	}
	return t
}

// Encode writes r as varints, times relative to base (unix nanos).
func (r *Record) Encode(base int64) string {
	buf := make([]byte, 0, 48)
	for _, p := range r.numbers() {
		buf = binary.AppendUvarint(buf, uint64(*p))
	}
	buf = binary.AppendUvarint(buf, uint64(math.Float32bits(r.Rate)))
	for _, t := range []int64{r.LastOK, r.LastSeen} {
		if t != 0 {
			t = 1 + zigzag(t-base)
		}
		buf = binary.AppendUvarint(buf, uint64(t)) // 0: never
	}
	return string(buf)
}

// Decode reads what Encode wrote.
func Decode(s string, base int64) (r Record) {
	b := []byte(s)
	u := func() int64 {
		v, n := binary.Uvarint(b)
		b = b[max(n, 0):]
		return int64(v)
	}
	for _, p := range r.numbers() {
		*p = u()
	}
	r.Rate = math.Float32frombits(uint32(u()))
	for _, p := range []*int64{&r.LastOK, &r.LastSeen} {
		if v := u(); v != 0 {
			*p = base + unzigzag(uint64(v-1))
		}
	}
	return r
}

func zigzag(v int64) int64    { return int64(uint64(v<<1) ^ uint64(v>>63)) }
func unzigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }
