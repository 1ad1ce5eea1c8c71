package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// Limit is the Colly LimitRule a user wrote, if any.
type Limit int

const (
	limNone    Limit = iota // no LimitRule
	limGlob                 // LimitRule{DomainGlob: "*", Parallelism: P}: one pool for every host
	limPerHost              // one LimitRule per host
)

func (l Limit) String() string { return [...]string{"none", "glob", "perhost"}[l] }

// Store is where the checkpoint lives, if there is one.
type Store int

const (
	cpNone Store = iota
	cpMemory
	cpBolt
)

func (s Store) String() string { return [...]string{"none", "memory", "bolt"}[s] }

// Wiring is how the crawler is put together: the library in-process as a
// user wires it into a Colly scraper, or productcrawl as a process.
type Wiring struct {
	Process    bool // productcrawl as a process; the fields below but Workers, Profile, Timeout and LimitP do not apply
	Workers    int  // productcrawl in Redis mode: this many workers on a private Redis (0: the checkpoint file)
	Async      bool
	Limit      Limit
	LimitP     int // the LimitRule's Parallelism; productcrawl's --parallelism
	Pacing     int // breaker.Config.Pacing's Parallelism; 0 = none
	RetryLoop  bool
	Transport  bool // a custom transport that counts the requests it carries
	Checkpoint Store
	Profile    breaker.Profile
	Timeout    time.Duration // the collector's request timeout
	// ReadmeValidator is the README's Usage wiring. Its snippet once
	// applied validate.Require(title) to every page; it now
	// has the page rules every case uses.
	ReadmeValidator bool
	// HasVisited: the user's link callback asks c.HasVisited first and
	// visits only a link it says is new, as many Colly programs do.
	HasVisited bool
	// IdleTTL is breaker.Config.IdleTTL, short, so that domains are
	// compacted whenever they rest and made whole on their next request
	// during the crawl; 0: the default (minutes, so never in a case).
	IdleTTL time.Duration
}

func drawWiring(d draw) Wiring {
	w := Wiring{
		Profile: []breaker.Profile{breaker.Standard(), breaker.Standard(), breaker.Conservative(), breaker.Aggressive()}[d.r.IntN(4)],
		Timeout: d.ms(400, 1200),
	}
	if d.chance(0.2) {
		w.Process = true
		w.LimitP = d.intn(1, 4)
		return w
	}
	w.Async = d.chance(0.8)
	if w.Async {
		w.Limit = Limit(d.pick(3, 4, 3))
		if w.Limit != limNone {
			w.LimitP = d.intn(1, 4)
		}
		if d.chance(0.4) {
			w.Pacing = d.intn(1, 4)
		}
	}
	w.RetryLoop = d.chance(0.5)
	w.Transport = d.chance(0.25)
	w.Checkpoint = Store(d.pick(5, 3, 2))
	w.ReadmeValidator = d.chance(0.05)
	return w
}

// breakerDefaultInFlight is the breaker's documented per-domain in-flight
// limit when no Config.Pacing is given; 0 while it has none (today: "Without
// it a domain has no in-flight limit"). Set it when the breaker gets one.
const breakerDefaultInFlight = 0

// Parallelism is P of invariant 5: the most requests in flight to one
// domain the wiring allows, or 0 when nothing limits it (then the number of
// URLs queued for the domain stands in).
func (w Wiring) Parallelism() int {
	if w.Process {
		return w.LimitP
	}
	if !w.Async {
		return 1
	}
	p := 0
	if w.Limit != limNone {
		p = w.LimitP
	}
	pace := w.Pacing
	if pace == 0 {
		pace = breakerDefaultInFlight
	}
	if pace > 0 && (p == 0 || pace < p) {
		p = pace
	}
	return p
}

// ThrottleRetries is how many times the breaker re-sends a throttled URL.
func (w Wiring) ThrottleRetries() int { return 10 }

func (w Wiring) String() string {
	if w.Process {
		if w.Workers > 0 {
			return fmt.Sprintf("productcrawl(redis×%d,p=%d,%s,timeout=%v)", w.Workers, w.LimitP, w.Profile.Name, w.Timeout)
		}
		return fmt.Sprintf("productcrawl(p=%d,%s,timeout=%v)", w.LimitP, w.Profile.Name, w.Timeout)
	}
	var parts []string
	if w.Async {
		parts = append(parts, "async")
	} else {
		parts = append(parts, "sync")
	}
	if w.Limit != limNone {
		parts = append(parts, fmt.Sprintf("limit=%s/%d", w.Limit, w.LimitP))
	}
	if w.Pacing > 0 {
		parts = append(parts, fmt.Sprintf("pacing=%d", w.Pacing))
	}
	if w.RetryLoop {
		parts = append(parts, "retry3")
	}
	if w.Transport {
		parts = append(parts, "transport")
	}
	if w.Checkpoint != cpNone {
		parts = append(parts, "cp="+w.Checkpoint.String())
	}
	if w.HasVisited {
		parts = append(parts, "hasvisited")
	}
	if w.IdleTTL > 0 {
		parts = append(parts, fmt.Sprintf("idle=%v", w.IdleTTL))
	}
	if w.ReadmeValidator {
		parts = append(parts, "readme-validator")
	}
	parts = append(parts, w.Profile.Name, "timeout="+w.Timeout.String())
	return "lib(" + strings.Join(parts, ",") + ")"
}
