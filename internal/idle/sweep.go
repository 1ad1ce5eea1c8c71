package idle

import (
	"sync"
	"sync/atomic"
	"time"
)

// Sweeper says which domains were left alone for the TTL: a domain notes
// the sweep period (Epoch) it was last used in, and a sweep names the
// latest period that ended a TTL ago. Init it before use.
type Sweeper struct {
	ttl       time.Duration // < 0: never sweep
	epoch     atomic.Uint32 // the sweep period under way
	lastSweep atomic.Int64  // unix nanos of the latest sweep
	sweeping  atomic.Bool   // a background sweep is running

	mu   sync.Mutex
	ends []epochEnd // when each recent period ended, oldest first
}

type epochEnd struct {
	epoch uint32
	at    time.Time
}

// Init readies s to sweep domains left alone for ttl (< 0: never).
func (s *Sweeper) Init(ttl time.Duration, now time.Time) {
	s.ttl = ttl
	s.epoch.Store(1)
	s.lastSweep.Store(now.UnixNano())
}

// Epoch is the sweep period under way.
func (s *Sweeper) Epoch() uint32 { return s.epoch.Load() }

// Start reports whether a background sweep is due at now and, if so,
// claims it: no other starts until the claimant calls Done.
func (s *Sweeper) Start(now time.Time) bool {
	if s.ttl < 0 || now.UnixNano()-s.lastSweep.Load() < int64(s.ttl/4) {
		return false
	}
	if !s.sweeping.CompareAndSwap(false, true) {
		return false
	}
	s.lastSweep.Store(now.UnixNano())
	return true
}

// Done ends the background sweep Start claimed.
func (s *Sweeper) Done() { s.sweeping.Store(false) }

// Sweep ends the period under way and calls compact with the latest
// period that ended at least the TTL ago, if any.
func (s *Sweeper) Sweep(now time.Time, compact func(cut uint32)) {
	if s.ttl < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastSweep.Store(now.UnixNano())
	cur := s.epoch.Load()
	s.ends = append(s.ends, epochEnd{cur, now})
	s.epoch.Store(cur + 1)
	limit := now.Add(-s.ttl)
	cut, keep := uint32(0), 0
	for i, e := range s.ends {
		if !e.at.After(limit) {
			cut, keep = e.epoch, i
		}
	}
	s.ends = s.ends[keep:]
	if cut != 0 {
		compact(cut)
	}
}
