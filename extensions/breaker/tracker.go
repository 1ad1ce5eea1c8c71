package breaker

import (
	"sync"
	"time"
)

// tracker is a domain's rolling record of the latest counted outcomes
// (seed 000's RollingTracker): unlike the circuit's window it is never
// cleared by a transition, so it describes the site, not the breaker.
type tracker struct {
	mu  sync.Mutex
	win window
}

func newTracker(size int) *tracker { return &tracker{win: newWindow(size)} }

func (t *tracker) add(o Outcome) {
	t.mu.Lock()
	t.win.add(o)
	t.mu.Unlock()
}

// stats returns n, the success rate (NaN-free: 0 when empty) and the
// median latency over successes.
func (t *tracker) stats() (n int, successRate float64, median time.Duration) {
	t.mu.Lock()
	outs := t.win.outcomes()
	t.mu.Unlock()
	if len(outs) == 0 {
		return 0, 0, 0
	}
	return len(outs), 1 - failureRateOf(outs), medianSuccessLatency(outs)
}
