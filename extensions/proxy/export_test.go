package proxy

import (
	"fmt"
	"time"
)

// The outcomes, for the tests that record one without a round trip.
type Outcome = outcome

const (
	Carried       = carried
	ConnectFailed = connectFailed
	AuthFailed    = authFailed
	ProxyError    = proxyError
	Blocked       = blocked
	NotJudged     = notJudged
)

var Classify = classify

// RecordOutcome charges o to proxy, as Record does once it has judged an
// attempt.
func (p *Pool) RecordOutcome(proxy string, o Outcome, latency time.Duration) error {
	p.mu.Lock()
	m := p.lookupLocked(proxy)
	if m != nil {
		p.recordLocked(m, o, latency)
	}
	p.unlock()
	if m == nil {
		return fmt.Errorf("proxy: %s is not in the pool", proxy)
	}
	return nil
}

var DefaultSettings = defaultSettings

// Name is how the pool names the proxy at u (host:port, as in Snapshot).
var Name = nameOf
