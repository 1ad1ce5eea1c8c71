package testserver

import (
	"slices"
	"time"
)

// Hit is one request a store received, recorded when it arrived and the
// scenario decided its answer (before any latency or hang).
type Hit struct {
	Seq     int           // 1 for the first request since Start or Reset
	Time    time.Time     // arrival, by Config.Now
	Path    string        // URL path, without query
	Status  int           // status answered; 0 when no HTTP answer was sent (Hang)
	Mode    Mode          // what answered: Healthy for a normal answer, else the failure mode (Truncated keeps Status 200)
	Latency time.Duration // wait added before the answer
	Conn    int           // the connection it came on: 1 for the store's first
	ConnSeq int           // its place on that connection: 1 for a fresh connection, more for a reused one
}

// Failing reports whether the hit was answered by anything but a healthy
// page: the requests a client sent into a degradation.
func (h Hit) Failing() bool { return h.Mode != Healthy }

// hitLog is the request log; the Store's mutex guards it.
type hitLog struct {
	hits     []Hit
	paths    map[string]int
	modes    [len(modeNames)]int
	failSeq  int
	failTime time.Time
}

func (l *hitLog) reset() {
	*l = hitLog{paths: make(map[string]int)}
}

func (l *hitLog) add(h Hit) {
	h.Seq = len(l.hits) + 1
	l.hits = append(l.hits, h)
	l.paths[h.Path]++
	l.modes[h.Mode]++
	if h.Failing() && l.failSeq == 0 {
		l.failSeq, l.failTime = h.Seq, h.Time
	}
}

// Requests returns a copy of every hit since Start or Reset, in order of
// arrival.
func (s *Store) Requests() []Hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log.hits)
}

// Count returns the number of requests received since Start or Reset,
// hanging ones included.
func (s *Store) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.log.hits)
}

// CountPath returns how many times path (e.g. ProductPath(7)) was requested.
func (s *Store) CountPath(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.paths[path]
}

// CountMode returns how many requests were answered by mode m, e.g.
// CountMode(Healthy) pages served, CountMode(Hang) requests left hanging.
func (s *Store) CountMode(m Mode) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m < 0 || int(m) >= len(s.log.modes) {
		return 0
	}
	return s.log.modes[m]
}

// FailingSince returns the arrival time and Seq of the first request answered
// by anything but a healthy page, or the zero time and 0 if there was none.
func (s *Store) FailingSince() (time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.failTime, s.log.failSeq
}

// SentAfterFailing returns how many requests arrived from the first failing
// one on, that one included: the requests a client sent into the
// degradation. A store that degrades after 30 requests and is hit 40 times
// reports 10. It is 0 while nothing has failed.
func (s *Store) SentAfterFailing() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log.failSeq == 0 {
		return 0
	}
	return len(s.log.hits) - s.log.failSeq + 1
}
