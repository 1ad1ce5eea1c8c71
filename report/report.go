package report

import (
	"slices"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
)

// Report is how a run ended and what happened on every domain.
type Report struct {
	// Outcome is the library's decision: state, reason, domains, findings.
	Outcome outcome.Outcome `json:"outcome"`
	// ExitCode is Outcome.ExitCode(): 0 complete, 2 tripped, 3 empty,
	// 1 error.
	ExitCode int `json:"exit_code"`
	// Domains are sorted by name.
	Domains []Domain `json:"domains"`
	// Total sums the counters of every domain (Domain is "total", State,
	// Profile, RetryAt and SelectorBroken are empty, MedianLatency is the
	// largest domain median).
	Total Domain `json:"total"`
}

// Domain is one host's line of the report. The host is lower-case with its
// port, the key the breaker and the validator use.
type Domain struct {
	Domain string `json:"domain"`
	// State is the circuit's final state ("closed", "open", "half-open"),
	// or "" when no breaker reported on the domain.
	State   string `json:"state"`
	Profile string `json:"profile,omitempty"`
	// RetryAt is when an open circuit may be probed again.
	RetryAt time.Time `json:"retry_at,omitzero"`
	// Records is how many records the program wrote for the domain
	// (WithRecords); 0 when it did not say.
	Records int64 `json:"records"`
	// OK counts pages that passed validation (2xx, when no validator).
	OK int64 `json:"ok"`
	// Invalid counts 2xx pages the validator rejected.
	Invalid int64 `json:"invalid"`
	// Failures counts the other attempts by class.
	Failures Failures `json:"failures"`
	// Refused counts requests the breaker refused without touching the
	// network.
	Refused int64 `json:"refused"`
	// Unfinished counts URLs refused or given up on and not attempted
	// since: the work a rescheduled run has left to do.
	Unfinished int `json:"unfinished"`
	// Dead counts URLs dead of failures, their attempts spent, as the
	// outcome's "dead" findings name them (by cause, with samples, in
	// Outcome.Findings[].Dead): a rescheduled run will not try them.
	Dead int `json:"dead"`
	// Trips is how many times the circuit opened.
	Trips int `json:"trips"`
	// Pauses counts Retry-After pauses; PausedFor is the time spent in
	// them.
	Pauses     int64         `json:"pauses"`
	PausedFor  time.Duration `json:"-"`
	PausedForS float64       `json:"paused_for_s"`
	// PaceLimit and PaceGap are the domain's pace at the end: the most
	// requests in flight (0: no limit of Breakwater's own) and the least
	// gap between two requests.
	PaceLimit int           `json:"pace_limit"`
	PaceGap   time.Duration `json:"-"`
	PaceGapMS float64       `json:"pace_gap_ms"`
	// MedianLatency is the median latency of the recent successes.
	MedianLatency   time.Duration `json:"-"`
	MedianLatencyMS float64       `json:"median_latency_ms"`
	// SelectorBroken is the validator's diagnosis, if the domain's pages
	// arrived whole but without the required structure.
	SelectorBroken *Broken `json:"selector_broken,omitempty"`
}

// Failures counts attempts that were neither valid nor invalid pages, by
// the breaker's outcome classes.
type Failures struct {
	// Degraded: timeouts, refused or reset connections, 5xx, truncated
	// bodies, DNS failures. They count against the breaker.
	Degraded int64 `json:"degraded"`
	// Throttled (429), Blocked (401/403), Gone (404/410) and ClientError
	// (other 4xx) never trip the breaker.
	Throttled   int64 `json:"throttled"`
	Blocked     int64 `json:"blocked"`
	Gone        int64 `json:"gone"`
	ClientError int64 `json:"client_error"`
	// Excluded says nothing about the site: cancelled or aborted by the
	// crawler itself.
	Excluded int64 `json:"excluded"`
}

// Broken is a selector_broken diagnosis: the template changed or the
// selector is wrong, a human must look.
type Broken struct {
	Selectors []string `json:"selectors"`
	// Pages is how many full-size 2xx pages in a row missed them.
	Pages int `json:"pages"`
	// ValidBefore is how many valid pages the domain served first: 0
	// suggests a wrong selector, more a template changed during the run.
	ValidBefore int `json:"valid_before"`
	// Evidence lists the URLs of those pages.
	Evidence []string `json:"evidence"`
	Reason   string   `json:"reason"`
}

// BreakerSource is what the report reads from a breaker;
// *breaker.Breaker implements it.
type BreakerSource interface {
	Stats() []breaker.DomainStats
	Unfinished() []breaker.Unfinished
}

// ValidatorSource is what the report reads from a validator;
// *validate.Validator implements it.
type ValidatorSource interface {
	Broken() []validate.BrokenDomain
}

// Option adds a source to a Report.
type Option func(*builder)

type builder struct {
	breakers   []BreakerSource
	validators []ValidatorSource
	records    map[string]int64
}

// WithBreaker reads per-domain counters, states, trips, latency and the
// unfinished URLs from b. A nil b is ignored.
func WithBreaker(b BreakerSource) Option {
	return func(bd *builder) {
		if b != nil {
			bd.breakers = append(bd.breakers, b)
		}
	}
}

// WithValidator reads the selector_broken diagnosis from v. A nil v is
// ignored.
func WithValidator(v ValidatorSource) Option {
	return func(bd *builder) {
		if v != nil {
			bd.validators = append(bd.validators, v)
		}
	}
}

// WithRecords gives the number of records the program wrote per domain
// (keys are hosts, as in a URL; they are normalised like the breaker's).
func WithRecords(perDomain map[string]int64) Option {
	return func(bd *builder) {
		if bd.records == nil {
			bd.records = make(map[string]int64, len(perDomain))
		}
		for h, n := range perDomain {
			bd.records[breaker.HostOf(h)] += n
		}
	}
}

// New builds the report of a run that ended as o, from the given sources.
// Call it after the crawl has finished (after c.Wait()), so the counters
// are final.
func New(o outcome.Outcome, opts ...Option) Report {
	var bd builder
	for _, opt := range opts {
		if opt != nil {
			opt(&bd)
		}
	}
	doms := map[string]*Domain{}
	get := func(name string) *Domain {
		d := doms[name]
		if d == nil {
			d = &Domain{Domain: name}
			doms[name] = d
		}
		return d
	}
	for _, b := range bd.breakers {
		for _, s := range b.Stats() {
			d := get(s.Domain)
			d.State, d.Profile, d.RetryAt = s.State.String(), s.Profile, s.RetryAt.UTC()
			d.OK += s.Count(breaker.Success)
			d.Invalid += s.Count(breaker.Invalid)
			d.Failures.Degraded += s.Count(breaker.Degraded)
			d.Failures.Throttled += s.Count(breaker.Throttled)
			d.Failures.Blocked += s.Count(breaker.Blocked)
			d.Failures.Gone += s.Count(breaker.Gone)
			d.Failures.ClientError += s.Count(breaker.ClientError)
			d.Failures.Excluded += s.Count(breaker.Excluded)
			d.Refused += s.Refused
			d.Trips += s.Trips
			d.Pauses += int64(s.Pace.Pauses)
			d.PausedFor += s.Pace.PausedFor
			d.PausedForS = d.PausedFor.Seconds()
			d.PaceLimit, d.PaceGap = s.Pace.Limit, s.Pace.Gap
			d.PaceGapMS = float64(s.Pace.Gap) / float64(time.Millisecond)
			d.MedianLatency = s.MedianLatency
		}
		if us, ok := b.(interface {
			UnfinishedSummary() breaker.UnfinishedSummary
		}); ok {
			// Every URL counted, also past the breaker's bounded list.
			for dom, n := range us.UnfinishedSummary().PerDomain {
				get(dom).Unfinished += n
			}
		} else {
			for _, u := range b.Unfinished() {
				get(u.Domain).Unfinished++
			}
		}
	}
	for _, v := range bd.validators {
		for _, bk := range v.Broken() {
			br := &Broken{Selectors: slices.Clone(bk.Selectors), Pages: len(bk.Pages), ValidBefore: bk.ValidBefore,
				Reason: bk.Err().Error()}
			for _, e := range bk.Pages {
				br.Evidence = append(br.Evidence, e.URL)
			}
			get(bk.Domain).SelectorBroken = br
		}
	}
	for h, n := range bd.records {
		get(h).Records += n
	}
	for _, f := range o.Findings {
		for _, g := range f.Dead {
			get(breaker.HostOf(g.Domain)).Dead += g.URLs
		}
	}

	r := Report{Outcome: o, ExitCode: o.ExitCode(), Domains: make([]Domain, 0, len(doms)), Total: Domain{Domain: "total"}}
	for _, d := range doms {
		d.MedianLatencyMS = ms(d.MedianLatency)
		r.Domains = append(r.Domains, *d)
	}
	slices.SortFunc(r.Domains, func(a, b Domain) int {
		switch {
		case a.Domain < b.Domain:
			return -1
		case a.Domain > b.Domain:
			return 1
		}
		return 0
	})
	t := &r.Total
	for _, d := range r.Domains {
		t.Records += d.Records
		t.OK += d.OK
		t.Invalid += d.Invalid
		t.Failures.Degraded += d.Failures.Degraded
		t.Failures.Throttled += d.Failures.Throttled
		t.Failures.Blocked += d.Failures.Blocked
		t.Failures.Gone += d.Failures.Gone
		t.Failures.ClientError += d.Failures.ClientError
		t.Failures.Excluded += d.Failures.Excluded
		t.Refused += d.Refused
		t.Unfinished += d.Unfinished
		t.Dead += d.Dead
		t.Trips += d.Trips
		t.Pauses += d.Pauses
		t.PausedFor += d.PausedFor
		t.MedianLatency = max(t.MedianLatency, d.MedianLatency)
	}
	t.MedianLatencyMS = ms(t.MedianLatency)
	t.PausedForS = t.PausedFor.Seconds()
	return r
}

// Domain returns the line of the named host, and false if the report has
// none. The name is normalised as the breaker's domain keys are.
func (r Report) Domain(host string) (Domain, bool) {
	host = breaker.HostOf(host)
	for _, d := range r.Domains {
		if d.Domain == host {
			return d, true
		}
	}
	return Domain{}, false
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}
