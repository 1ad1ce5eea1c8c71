package checkpoint

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
)

// deadSamples is how many URLs of each domain and cause Judge names.
const deadSamples = 3

// classes are the outcome classes, as LastError starts with them.
var classes = func() map[string]bool {
	m := map[string]bool{}
	for c := circuit.Success; c <= circuit.Excluded; c++ {
		m[c.String()] = true
	}
	return m
}()

// deathCause reads a dead URL's cause from its LastError ("degraded (HTTP
// 503)", "invalid"), and whether it is gone (404, 410: fine).
func deathCause(lastError string) (cause string, gone bool) {
	class, rest, ok := strings.Cut(lastError, ": ")
	if !ok || !classes[class] {
		class, rest = "", lastError
	}
	detail := ""
	switch {
	case strings.HasPrefix(rest, "HTTP ") && len(rest) >= 8:
		detail = rest[:8]
	case strings.Contains(rest, "timeout"), strings.Contains(rest, "deadline exceeded"):
		detail = "timeout"
	case strings.Contains(rest, "connection refused"):
		detail = "refused"
	case strings.Contains(rest, "connection reset"), strings.Contains(rest, "broken pipe"):
		detail = "reset"
	case strings.Contains(rest, "EOF"):
		detail = "truncated"
	case strings.Contains(rest, "no such host"):
		detail = "dns"
	}
	if class == "" {
		switch {
		case detail == "HTTP 404" || detail == "HTTP 410":
			class = "gone"
		case strings.HasPrefix(rest, "checkpoint:"):
			return "request not loadable", false
		default:
			class = "failed"
		}
	}
	switch {
	case class == "gone":
		return class, true
	case class == "invalid" || detail == "":
		return class, false
	}
	return class + " (" + detail + ")", false
}

// deadTally groups dead URLs by domain and cause.
type deadTally struct {
	total  int
	groups map[[2]string]*outcome.Dead
}

func (t *deadTally) add(domain string, r storage.Record) {
	cause, gone := deathCause(r.LastError)
	if gone {
		return
	}
	k := [2]string{domain, cause}
	g := t.groups[k]
	if g == nil {
		g = &outcome.Dead{Domain: domain, Cause: cause}
		t.groups[k] = g
	}
	g.URLs++
	if len(g.Samples) < deadSamples {
		g.Samples = append(g.Samples, r.URL)
	}
	t.total++
}

// finding is the tally as Judge reports it.
func (t *deadTally) finding(maxAttempts int) (outcome.Finding, bool) {
	if t.total == 0 {
		return outcome.Finding{}, false
	}
	f := outcome.Finding{State: outcome.Error, Kind: "dead"}
	for _, g := range t.groups {
		f.Dead = append(f.Dead, *g)
	}
	slices.SortFunc(f.Dead, func(a, b outcome.Dead) int { // by domain, most URLs first
		return cmp.Or(strings.Compare(a.Domain, b.Domain), cmp.Compare(b.URLs, a.URLs), strings.Compare(a.Cause, b.Cause))
	})
	var parts []string
	for _, g := range f.Dead {
		if len(f.Domains) == 0 || f.Domains[len(f.Domains)-1] != g.Domain {
			f.Domains = append(f.Domains, g.Domain)
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s (e.g. %s)", g.Domain, g.URLs, g.Cause, strings.Join(g.Samples, ", ")))
	}
	f.Reason = fmt.Sprintf("%d URLs dead of failures, their attempts spent (%d each), never tried again by a resume (%s); "+
		"a person decides: fix the cause or wait for the site, then re-drive them with RetryDead",
		t.total, maxAttempts, strings.Join(parts, "; "))
	return f, true
}

// RetryDead gives every URL dead of failures (not gone) its attempts
// back: pending again, fetched by this run's Resume or queue after the
// unfinished ones. It returns how many. Call it after Register, before
// Resume. A domain saved open keeps them parked until its cooldown ends.
func (cp *Checkpoint) RetryDead() (int, error) {
	cp.mu.Lock()
	defer cp.unlock()
	if err := cp.beginLocked(); err != nil {
		return 0, err
	}
	var revive []storage.Record
	now := cp.now().UTC()
	if err := cp.flush(true); err != nil {
		return 0, err
	}
	err := cp.store.Scan(func(r storage.Record) error {
		if _, gone := deathCause(r.LastError); !gone {
			r.State, r.Attempts, r.NotBefore, r.Updated = storage.Pending, 0, time.Time{}, now
			revive = append(revive, r)
		}
		return nil
	}, storage.Dead)
	if err != nil {
		return 0, cp.fail(err)
	}
	if err := cp.putBatchesLocked(revive); err != nil {
		return 0, err
	}
	for _, r := range revive {
		cp.front = append(cp.front, r.ID)
	}
	if len(revive) > 0 {
		cp.opt.Logger.Info().Str("event", "checkpoint_retry_dead").Int("revived", len(revive)).
			Msg("checkpoint: URLs dead of failures get their attempts back and are fetched again")
	}
	return len(revive), nil
}

// domainOf is the breaker's domain key of a URL, "?" if it has none.
func domainOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return strings.ToLower(p.Host)
	}
	return "?"
}
