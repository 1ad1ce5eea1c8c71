package main

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/rs/zerolog"
)

// reach watches the start hosts: one that never answered, whose
// connections were refused or whose name did not resolve, cannot be
// crawled from here at all. Each is logged once, at warn level (a DNS
// failure and a refused connection alike); when no start host can be
// reached, the run is an error that says so plainly (exit 1: the URL,
// the network or the resolver needs a person), not a trip a scheduler
// would repeat forever.
type reach struct {
	log zerolog.Logger

	mu    sync.Mutex
	hosts map[string]*hostReach // the start hosts
	order []string
}

type hostReach struct {
	answered bool   // some request got an HTTP answer
	url      string // the first URL that could not be reached
	cause    string // "connection refused" or "name not resolved"; "" while none failed so
	err      error
}

func newReach(log zerolog.Logger, startHosts []string) *reach {
	r := &reach{log: log, hosts: map[string]*hostReach{}}
	for _, h := range startHosts {
		r.hosts[h] = &hostReach{}
		r.order = append(r.order, h)
	}
	return r
}

// unreachableCause says why err means nothing answers at the address:
// the name does not resolve, or the connection was refused; "" for
// anything else (a timeout or a reset may pass).
func unreachableCause(err error) string {
	var dns *net.DNSError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &dns):
		return "name not resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	return ""
}

// observe is a breaker.Config.OnAttempt hook.
func (r *reach) observe(a observe.Attempt) {
	cause := ""
	if a.Status == 0 {
		cause = unreachableCause(a.Err)
	}
	r.mu.Lock()
	h := r.hosts[a.Domain]
	if h == nil || h.answered {
		r.mu.Unlock()
		return
	}
	first := false
	switch {
	case a.Status > 0 || a.Result.Class == circuit.Success:
		h.answered = true
	case cause != "" && h.cause == "":
		h.url, h.cause, h.err, first = a.Request.URL.String(), cause, a.Err, true
	}
	r.mu.Unlock()
	if first {
		r.log.Warn().Str("event", "unreachable").Str("domain", a.Domain).Str("url", h.url).Str("cause", cause).Err(a.Err).
			Msg("start host cannot be reached: check the URL, whether the site is up, and this machine's network and resolver")
	}
}

// Judge makes a run none of whose start hosts could be reached an error,
// and names the unreachable ones when others were crawled.
func (r *reach) Judge() outcome.Evidence {
	r.mu.Lock()
	defer r.mu.Unlock()
	var down, parts []string
	for _, name := range r.order {
		if h := r.hosts[name]; !h.answered && h.cause != "" {
			down = append(down, name)
			parts = append(parts, fmt.Sprintf("%s (%s)", h.url, h.cause))
		}
	}
	if len(down) == 0 {
		return outcome.Evidence{}
	}
	f := outcome.Finding{Kind: "unreachable", Domains: slices.Clone(down)}
	switch {
	case len(down) < len(r.order):
		f.State = outcome.Tripped
		f.Reason = "start URL cannot be reached, the others were crawled: " + strings.Join(parts, ", ")
	case len(r.order) == 1:
		f.State = outcome.Error
		f.Reason = "the only start URL cannot be reached: " + parts[0] + "; nothing was crawled: check the URL, whether the site is up, and this machine's network and resolver"
	default:
		f.State = outcome.Error
		f.Reason = "no start URL can be reached: " + strings.Join(parts, ", ") + "; nothing was crawled: check the URLs, the network and the resolver"
	}
	return outcome.Evidence{Findings: []outcome.Finding{f}}
}
