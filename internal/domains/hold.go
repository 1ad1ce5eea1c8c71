package domains

import (
	"time"
)

// This file lets a caller act on a domain for a reason the breaker cannot
// see itself: a robots.txt that answered 5xx, a Crawl-delay.

// HoldOpen is what breaker.Breaker.HoldOpen does (its doc says how).
func (b *Set) HoldOpen(host string, until time.Time, reason string) error {
	d, err := b.Pin(hostOf(host))
	if err != nil {
		return err
	}
	t, err := d.Circuit.HoldOpen(b.clock, until, reason)
	if err != nil {
		return err
	}
	if t.From != t.To {
		b.transitioned(d, t)
	}
	return nil
}

// SetMinGap is what breaker.Breaker.SetMinGap does (its doc says how).
func (b *Set) SetMinGap(host string, gap time.Duration) error {
	d, err := b.Pin(hostOf(host))
	if err != nil {
		return err
	}
	d.Pace.RaiseMinGap(gap)
	return nil
}
