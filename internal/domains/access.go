package domains

import (
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
)

// This file is what the Colly adapter (extensions/breaker) asks of a Set
// beyond Allow and Record: a domain by host, the findings the run's
// ending weighs, and acting on a domain from outside (HoldOpen, SetMinGap).

// Lookup returns host's domain if it is kept whole, unpinned.
func (b *Set) Lookup(host string) *Domain {
	d, _ := b.domains.Load(host)
	return d
}

// Judge counts the successes over every domain and names those whose
// circuit is not closed, for the run's ending; findings are the fleet's
// and the blocked hold's.
func (b *Set) Judge() (success int64, open []string, findings []outcome.Finding) {
	for d := range b.all {
		success += int64(d.Counts[circuit.Success].Load())
		if s, err := d.Circuit.Snapshot(b.Clock); err == nil && s.State != circuit.Closed {
			open = append(open, d.Name)
		}
	}
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

// WithStalled returns t noting that d of its request's latency was this
// process kept from running (the breaker's stall clock), not the site answering.
func (t Ticket) WithStalled(d time.Duration) Ticket { t.stalled = d; return t }

// HoldOpen is what breaker.Breaker.HoldOpen does (its doc says how): a
// reason the breaker cannot see itself, such as a robots.txt answering 5xx.
func (b *Set) HoldOpen(host string, until time.Time, reason string) error {
	d, err := b.Pin(strings.ToLower(host))
	if err != nil {
		return err
	}
	defer d.Unpin()
	t, err := d.Circuit.HoldOpen(b.Clock, until, reason)
	if err == nil {
		b.transitioned(d, t)
	}
	return err
}

// SetMinGap is what breaker.Breaker.SetMinGap does (its doc says how).
func (b *Set) SetMinGap(host string, gap time.Duration) error {
	d, err := b.Pin(strings.ToLower(host))
	if err != nil {
		return err
	}
	defer d.Unpin()
	d.Pace.RaiseMinGap(gap)
	return nil
}
