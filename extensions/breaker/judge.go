package breaker

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
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

// Judge reports, for the run's outcome, the domains whose circuit is not
// closed and the URLs left unfinished (both: tripped, reschedule), and
// counts 2xx answers as valid pages when no validator judges them.
func (b *Breaker) Judge() outcome.Evidence {
	var ev outcome.Evidence
	// Not from Stats: a broad crawl's million domains need no map each.
	success, open, findings := b.set.Judge()
	sort.Strings(open)
	if len(open) > 0 {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "circuit_open",
			Reason:  fmt.Sprintf("circuit not closed for %s", strings.Join(open, ", ")),
			Domains: open})
	}
	un := b.Unfinished()
	if len(un.PerDomain) > 0 {
		var doms, parts []string
		for d, n := range un.PerDomain {
			doms = append(doms, d)
			parts = append(parts, fmt.Sprintf("%s: %d", d, n))
		}
		sort.Strings(doms)
		sort.Strings(parts)
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "unfinished",
			Reason: fmt.Sprintf("%d URLs not collected and not attempted since: %s (%s)",
				un.Total, causes(un), strings.Join(parts, ", ")),
			Domains: doms})
	}
	ev.Findings = append(ev.Findings, findings...)
	if b.validator == nil {
		ev.Valid, ev.Counts = success, true
	}
	return ev
}

// causes says why the unfinished URLs were left, most common first: "3
// failed as invalid pages, 1 refused while its circuit was open". URLs
// counted past the sample are "not listed".
func causes(un UnfinishedURLs) string {
	n := map[string]int{}
	for _, u := range un.URLs {
		n[causeOf(u.Reason)]++
	}
	if un.Truncated > 0 {
		n["past the listed sample"] += un.Truncated
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if n[keys[i]] != n[keys[j]] {
			return n[keys[i]] > n[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, ", ")
}

// causeOf names the cause an Unfinished reason gives, in a few words.
func causeOf(reason string) string {
	switch {
	case strings.HasPrefix(reason, "cancelled"):
		return "cancelled by the crawl's end"
	case strings.HasPrefix(reason, "failed: "):
		class, _, _ := strings.Cut(strings.TrimPrefix(reason, "failed: "), " ")
		switch class {
		case circuit.Invalid.String():
			return "failed as invalid pages (a 2xx the validator rejected)"
		case circuit.Degraded.String():
			return "failed as degraded (5xx, timeouts, cut bodies)"
		}
		return "failed as " + class
	case strings.HasPrefix(reason, "throttled"):
		return "throttled (429)"
	case strings.HasPrefix(reason, "not visited"):
		return "not visited (a Colly limit or filter)"
	case strings.Contains(reason, "answered 401/403 to every request"):
		return "blocked (401/403 to every request: fix the client)"
	case strings.Contains(reason, "paused or at its most"):
		return "held back (the domain paused or at its most requests in flight)"
	case strings.Contains(reason, "half-open"), strings.Contains(reason, "is open"):
		return "refused while its circuit was open"
	}
	return "left for another reason"
}
