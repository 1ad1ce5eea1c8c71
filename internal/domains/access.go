package domains

import (
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/rs/zerolog"
)

// This file is what the Colly adapter (extensions/breaker) asks of a Set
// beyond its API: a domain by host, its refusal, its timeout, and the
// findings the run's ending weighs.

// Pin returns host's domain, pinned: the caller unpins it, or hands the
// pin to a Ticket.
func (b *Set) Pin(host string) (*Domain, error) { return b.domain(host) }

// Lookup returns host's domain if it is kept whole, unpinned.
func (b *Set) Lookup(host string) *Domain {
	if v, ok := b.domains.Load(host); ok {
		return v.(*Domain)
	}
	return nil
}

// KnownOpen returns d's cached refusal while it is known to be open.
func (b *Set) KnownOpen(d *Domain) *circuit.OpenError { return b.knownOpen(d) }

// AllowPinned asks d's circuit; d is pinned, and the pin goes to the
// ticket, or is let go with a refusal.
func (b *Set) AllowPinned(d *Domain) (Ticket, error) { return b.allow(d) }

// TimeoutFor is d's adaptive timeout, or the fleet's prior; 0 if none.
func (b *Set) TimeoutFor(d *Domain) time.Duration { return b.timeoutFor(d) }

// HoldOpenFor opens d's circuit for a reason outside its window.
func (b *Set) HoldOpenFor(d *Domain, reason string) { b.holdOpen(d, reason) }

// HandBack reports when a throttled URL of d may be sent again, and
// whether that is beyond the resend horizon.
func (b *Set) HandBack(d *Domain, now time.Time) (time.Time, bool) { return b.handBack(d, now) }

// Judge counts the successes over every domain and names those whose
// circuit is not closed, for the run's ending; findings are the fleet's
// and the blocked hold's.
func (b *Set) Judge() (success int64, open []string, findings []outcome.Finding) {
	b.domains.Range(func(_, v any) bool {
		d := v.(*Domain)
		success += d.Counts[circuit.Success].Load()
		if s, err := d.Circuit.Snapshot(b.clock); err == nil && s.State != circuit.Closed {
			open = append(open, d.Name)
		}
		return true
	})
	success += b.dormant.Totals().Counts[circuit.Success] // compacted domains are closed
	if f := b.fleet.Finding(); f != nil {
		findings = append(findings, *f)
	}
	if f := b.blockedFinding(); f != nil {
		findings = append(findings, *f)
	}
	return success, open, findings
}

// Dormant is how many domains are compacted now.
func (b *Set) Dormant() int { return b.dormant.Totals().Domains }

// Domain returns the ticket's domain, nil for the zero Ticket.
func (t Ticket) Domain() *Domain { return t.d }

// WithInFlight returns t noting n requests in flight to its domain as it
// left, itself included.
func (t Ticket) WithInFlight(n int) Ticket { t.inFlight = n; return t }

// LogPace logs a change of a domain's pace.
func LogPace(l zerolog.Logger, domain, why string, limit int, gap time.Duration) {
	logPace(l, domain, why, limit, gap)
}
