package breaker

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/gocolly/colly/v2"
)

// Unfinished is a URL that was not collected: refused while its domain's
// circuit was open, throttled past its retry budget or its domain's
// horizon, cancelled by the crawl's own end, or failed (degraded, invalid,
// blocked, another 4xx) with no retry since. Until a later attempt of the
// same URL leaves, it stays listed, so nothing is lost without a trace,
// checkpoint or not. A 404 or 410, or a request the user's callbacks
// aborted, is not unfinished.
type Unfinished struct {
	URL     string    `json:"url"`
	Domain  string    `json:"domain"`
	Reason  string    `json:"reason"`
	RetryAt time.Time `json:"retry_at,omitzero"`
}

func (b *Breaker) markUnfinished(u Unfinished) { b.unfinished.mark(u) }

// markLeft takes r's URL off the unfinished list: it left.
func (b *Breaker) markLeft(r *colly.Request) { b.unfinished.left(r) }

// unfinishedSample lists the unfinished URLs the sample holds, sorted by
// URL.
func (b *Breaker) unfinishedSample() []Unfinished {
	var out []Unfinished
	b.unfinished.listed.rangeValues(func(v any) bool {
		out = append(out, v.(Unfinished))
		return true
	})
	sortUnfinished(out)
	return out
}

// Judge reports, for the run's outcome, the domains whose circuit is not
// closed and the URLs left unfinished (both: tripped, reschedule), and
// counts 2xx answers as valid pages when no validator judges them.
func (b *Breaker) Judge() outcome.Evidence {
	var ev outcome.Evidence
	var open []string
	var success int64
	// Not from Stats: a broad crawl's million domains need no map each.
	b.domains.Range(func(_, v any) bool {
		d := v.(*domain)
		success += d.counts[Success].Load()
		if s, err := d.circuit.Snapshot(b.clock); err == nil && s.State != Closed {
			open = append(open, d.name)
		}
		return true
	})
	success += b.dormantTotals().counts[Success] // compacted domains are closed
	sort.Strings(open)
	if len(open) > 0 {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "circuit_open",
			Reason:  fmt.Sprintf("circuit not closed for %s", strings.Join(open, ", ")),
			Domains: open})
	}
	perDomain := b.Unfinished().PerDomain
	if len(perDomain) > 0 {
		var doms, parts []string
		for d, n := range perDomain {
			doms = append(doms, d)
			parts = append(parts, fmt.Sprintf("%s: %d", d, n))
		}
		sort.Strings(doms)
		sort.Strings(parts)
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "unfinished",
			Reason:  "URLs not collected (refused, throttled, cancelled or failed) and not attempted since (" + strings.Join(parts, ", ") + ")",
			Domains: doms})
	}
	if f := b.fleet.finding(); f != nil {
		ev.Findings = append(ev.Findings, *f)
	}
	if b.validator == nil {
		ev.Valid, ev.Counts = success, true
	}
	return ev
}
