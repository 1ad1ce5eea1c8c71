package domains

import (
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// early acts on what the tracker saw before the window's failure rate did:
// slow calls, a latency slope, a new adaptive timeout.
func (b *Set) early(d *Domain, s trackerSignals) {
	t := d.tracker.Load() // signals come from the tracker: it is there
	if s.Timeout > 0 && t != nil {
		b.prior.Add(s.Timeout)
		atomic.StoreInt64(&t.slowAfter, int64(s.Slow))
	}
	if s.Timeout > 0 && t != nil && time.Duration(atomic.SwapInt64(&t.timeout, int64(s.Timeout))) != s.Timeout {
		b.Log.Debug().Str("event", "timeout_changed").Str("domain", d.Name).Dur("timeout", s.Timeout).
			Msg("breaker: adaptive request timeout updated")
	}
	if s.Healthy {
		b.Log.Debug().Str("event", "cooldown_decay").Str("domain", d.Name).
			Msg("breaker: a healthy stretch took one trip off the cooldown streak")
	}
	if s.Median > 0 {
		if now := b.roughNow(); d.slopeAt.Load() != now {
			d.slopeAt.Store(now) // only on change: the rough clock moves once a second, and a store is a locked instruction
		}
	}
	switch s.Slope {
	case +1:
		b.Log.Warn().Str("event", "degrading").Str("domain", d.Name).
			Float64("median_latency_ms", ms(s.Median)).Float64("baseline_ms", ms(s.Baseline)).
			Float64("multiple", d.Profile.SlopeMultiple).Bool("trips", d.Profile.SlopeTrip).
			Msgf("breaker: %s is degrading: median latency %v against a baseline of %v", d.Name, s.Median, s.Baseline)
		for _, f := range b.OnDegrading {
			f(d.Name, s.Median, s.Baseline)
		}
		if d.Profile.SlopeTrip {
			if n, of := b.slowedElsewhere(d); of > 0 && 2*n > of {
				b.Log.Warn().Str("event", "client_slow").Str("domain", d.Name).Int("slowed", n).Int("of", of).
					Msg("breaker: most other domains slowed at the same time: the slowness is this crawler's (CPU, network, a stall), not the site's; no latency trip")
				return
			}
			b.HoldOpenFor(d, circuit.ReasonLatencySlope)
			return
		}
	case -1:
		b.Log.Info().Str("event", "degrading_over").Str("domain", d.Name).
			Float64("median_latency_ms", ms(s.Median)).Float64("baseline_ms", ms(s.Baseline)).
			Msgf("breaker: %s latency is back under its slope limit", d.Name)
	}
	if s.SlowTrip {
		b.Log.Warn().Str("event", "slow_calls").Str("domain", d.Name).Float64("slow_share", round3(s.SlowShare)).
			Dur("slow_call", d.Profile.SlowCall).Msgf("breaker: %s answers too slowly too often", d.Name)
		b.HoldOpenFor(d, circuit.ReasonSlowCalls)
	}
}

// HoldOpenFor opens d's circuit for its cooldown (grown, if it keeps
// tripping) for a reason found outside the circuit's window.
func (b *Set) HoldOpenFor(d *Domain, reason string) {
	t, err := d.Circuit.HoldOpen(b.Clock, b.Clock.Now().Add(d.Profile.Cooldown), reason)
	if err != nil {
		b.Log.Error().Str("event", "breaker_store_error").Str("domain", d.Name).Err(err).Msg("breaker: opening the circuit failed")
		return
	}
	b.transitioned(d, t)
}

// grow lengthens the cooldown of a domain that trips again before a
// healthy stretch (grownCooldown).
func (b *Set) grow(d *Domain, t circuit.Transition, streak int) circuit.Transition {
	cooldown, ok := grownCooldown(d.Profile.Cooldown, d.Profile.MaxCooldown, streak, b.Rand)
	if !ok {
		return t
	}
	until := t.At.Add(cooldown)
	if !until.After(t.RetryAt) {
		return t
	}
	if _, err := d.Circuit.HoldOpen(b.Clock, until, t.Reason); err != nil {
		b.Log.Error().Str("event", "breaker_store_error").Str("domain", d.Name).Err(err).Msg("breaker: growing the cooldown failed")
		return t
	}
	t.RetryAt = until
	return t
}

// slowedElsewhere counts the other domains past their own slope limit
// now, among those whose slope was evaluated lately (slowedElsewhere;
// stamped by roughNow: on the system clock a peer near the edge may count
// as a second older).
func (b *Set) slowedElsewhere(d *Domain) (slowed, of int) {
	return slowedElsewhere(d.tracker.Load(), b.Clock.Now(), func(yield func(*tracker, int64) bool) {
		for o := range b.all {
			if t := o.tracker.Load(); t != nil && !yield(t, o.slopeAt.Load()) {
				return
			}
		}
	})
}
