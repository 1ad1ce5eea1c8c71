package breaker

import (
	"time"
)

// This file lets a caller act on a domain for a reason the breaker cannot
// see itself: a robots.txt that answered 5xx, a Crawl-delay.

// HoldOpen opens host's circuit until until, for a reason found outside
// its window (reason names it in the transition, e.g. "robots_unavailable"):
// requests to host are refused and handed to OnRefused hooks as if it had
// tripped, and from until on it is probed as after a cooldown. A circuit
// already open stays open at least until then, never shorter. The
// transition is logged and reaches OnTransition hooks. It returns an
// error if the store's circuits cannot be held open from outside.
func (b *Breaker) HoldOpen(host string, until time.Time, reason string) error {
	d, err := b.domain(hostOf(host))
	if err != nil {
		return err
	}
	t, err := d.circuit.HoldOpen(b.clock, until, reason)
	if err != nil {
		return err
	}
	if t.From != t.To {
		b.transitioned(d, t)
	}
	return nil
}

// SetMinGap raises host's least gap between two requests to gap, for a
// rule found outside the breaker (robots.txt's Crawl-delay): the pace never
// goes below it from now on, recovery included, and a throttle slows the
// domain from there. A gap at or below the domain's least gap already
// changes nothing. Each worker of a shared crawl sets its own.
func (b *Breaker) SetMinGap(host string, gap time.Duration) error {
	d, err := b.domain(hostOf(host))
	if err != nil {
		return err
	}
	d.pace.RaiseMinGap(gap)
	return nil
}
