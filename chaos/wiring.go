package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
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

	// Colly features a scraper uses, drawn from the case's
	// third stream. None applies to productcrawl.

	// Clone: product pages are fetched through detail := c.Clone(), with
	// callbacks of its own (Colly's _examples/coursera_courses). The user
	// calls Use on c only: the clone shares c's transport.
	Clone bool
	// CacheDir: colly.CacheDir(a directory of the case's own), kept
	// across a resume.
	CacheDir bool
	// Delay and RandomDelay are set on every LimitRule of the wiring; with
	// none, a glob rule of Parallelism delayRuleP holds them.
	Delay, RandomDelay time.Duration
	// Revisits: colly.AllowURLRevisit(), the link callback keeps its own
	// set of links seen, and each store's start page is visited again
	// this many times, each from the callback of the one before.
	Revisits int
	// Queue: colly/queue's Queue with this many threads runs the crawl
	// (0: none); the link callback adds to it.
	Queue int
	// Redirect: product links go through a host of their own that answers
	// 302 to the store (a tracking redirect).
	Redirect bool
	// MaxDepth and MaxRequests are Colly's options (0: none). With
	// MaxRequests the user hands every error Visit returns to
	// b.NotVisited, as the breaker's doc says.
	MaxDepth    int
	MaxRequests int

	// Proxies is the crawl's proxy pool, drawn from the case's
	// fourth stream: one local test proxy per entry, in this mode, given
	// to the collector as a proxy.Pool's ProxyFunc and to the breaker as
	// Config.Proxies. None: no proxy.
	Proxies []testserver.ProxyMode
}

// badProxies is how many proxies of the pool fail every request.
func (w Wiring) badProxies() int {
	n := 0
	for _, m := range w.Proxies {
		if m != testserver.ProxyHealthy && m != testserver.ProxyLatency {
			n++
		}
	}
	return n
}

// proxiesClientSide reports whether more proxies fail than the pool may
// eject (half, at least one), or all do: the ending rightly blames the
// client side, and the healthy stores may be left unfinished.
func (w Wiring) proxiesClientSide() bool {
	bad := w.badProxies()
	return len(w.Proxies) > 0 && (bad > max(1, len(w.Proxies)/2) || bad == len(w.Proxies))
}

// drawProxies draws a proxy pool of 1-8 local proxies, most healthy.
func drawProxies(d draw, w *Wiring) {
	n := d.intn(1, 8)
	for range n {
		m := testserver.ProxyHealthy
		if d.chance(0.35) {
			m = []testserver.ProxyMode{testserver.ProxyRefuse, testserver.ProxyAuth407, testserver.ProxyBlock403, testserver.ProxyLatency, testserver.ProxyBadGateway}[d.pick(3, 2, 3, 2, 3)]
		}
		w.Proxies = append(w.Proxies, m)
	}
}

// delayRuleP is the Parallelism of the glob rule that holds a Delay when
// the wiring has no LimitRule of its own: Colly gives a rule without one a
// single slot, and this one limits nothing a case reaches.
const delayRuleP = 64

// drawFeatures draws the Colly features of a library case.
func drawFeatures(d draw, w *Wiring) {
	w.Clone = d.chance(0.25)
	w.CacheDir = d.chance(0.2)
	if d.chance(0.25) {
		switch d.pick(5, 2, 3) {
		case 0:
			w.Delay = d.ms(5, 60)
		case 1:
			w.RandomDelay = d.ms(5, 60)
		default:
			w.Delay, w.RandomDelay = d.ms(5, 30), d.ms(5, 30)
		}
	}
	if d.chance(0.2) {
		w.Revisits = d.intn(2, 5)
	}
	if d.chance(0.2) {
		w.Queue = d.intn(1, 4)
	}
	w.Redirect = d.chance(0.2)
	if d.chance(0.15) {
		w.MaxDepth = d.intn(2, 6)
	}
	if d.chance(0.15) && w.Queue == 0 {
		// Not with the queue: its runners drop the error Colly's scrape
		// returns, so the user has nothing to hand the breaker.
		w.MaxRequests = d.intn(10, 80)
	}
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

// breakerInFlight is the most requests the breaker lets one domain have in
// flight whatever the wiring: its room, the failures that trip the circuit
// (README: "A domain never has more requests in flight than its circuit
// could still stop").
func (w Wiring) breakerInFlight() int {
	return w.Profile.Settings().FailuresToTrip()
}

// Concurrency is the most requests in flight to one domain the wiring's
// own settings allow, the breaker's room aside, or 0 when nothing of the
// user's limits it: a LimitRule, Config.Pacing, a synchronous collector
// (one at a time, or one per thread of a queue).
func (w Wiring) Concurrency() int {
	if w.Process {
		return w.LimitP
	}
	p := 0
	if !w.Async {
		p = max(1, w.Queue)
	}
	// A product link through the redirecting host takes that host's
	// LimitRule slot and pace, not the store's: there only a glob rule
	// still limits what reaches the store.
	if w.Limit == limGlob || (w.Limit == limPerHost && !w.Redirect) {
		if p == 0 || w.LimitP < p {
			p = w.LimitP
		}
	}
	// So does a clone's request (not registered, it bypasses the pace;
	// it still takes the shared LimitRule's slot).
	if w.Pacing > 0 && !w.Redirect && !w.Clone && (p == 0 || w.Pacing < p) {
		p = w.Pacing
	}
	return p
}

// Parallelism is P of invariant 5: the most requests in flight to one
// domain, the least of what the wiring allows and the breaker's room
// (need), so that a wiring with nothing of its own limiting a domain has
// P = need, not every URL queued.
func (w Wiring) Parallelism() int {
	p := w.Concurrency()
	if w.Process {
		return p
	}
	if room := w.breakerInFlight(); p == 0 || room < p {
		p = room
	}
	return p
}

// featureKeys names the Colly features a library case may draw, in the
// order the summary lists them.
var featureKeys = []string{"clone", "cachedir", "delay", "revisit", "queue", "redirect", "maxdepth", "maxrequests"}

// FeatureKeys is the names (featureKeys) of the wiring's Colly features.
func (w Wiring) FeatureKeys() []string {
	var out []string
	for _, f := range w.Features() {
		out = append(out, strings.TrimRightFunc(strings.FieldsFunc(f, func(r rune) bool { return r == '=' || r == '×' })[0], func(r rune) bool { return r < 'a' || r > 'z' }))
	}
	return out
}

// without turns the Colly feature named f (a featureKeys entry) off.
func (w *Wiring) without(f string) {
	switch f {
	case "clone":
		w.Clone = false
	case "cachedir":
		w.CacheDir = false
	case "delay":
		w.Delay, w.RandomDelay = 0, 0
	case "revisit":
		w.Revisits = 0
	case "queue":
		w.Queue = 0
	case "redirect":
		w.Redirect = false
	case "maxdepth":
		w.MaxDepth = 0
	case "maxrequests":
		w.MaxRequests = 0
	}
}

// Features is the Colly features of the wiring, as Wiring.String shows them.
func (w Wiring) Features() []string {
	var parts []string
	if w.Clone {
		parts = append(parts, "clone")
	}
	if w.CacheDir {
		parts = append(parts, "cachedir")
	}
	if w.Delay > 0 || w.RandomDelay > 0 {
		var s string
		switch {
		case w.Delay == 0:
			s = "delay=rnd" + w.RandomDelay.String()
		case w.RandomDelay == 0:
			s = "delay=" + w.Delay.String()
		default:
			s = "delay=" + w.Delay.String() + "+rnd" + w.RandomDelay.String()
		}
		if w.Limit == limNone {
			s += fmt.Sprintf("(glob/%d)", delayRuleP)
		}
		parts = append(parts, s)
	}
	if w.Revisits > 0 {
		parts = append(parts, fmt.Sprintf("revisit×%d", w.Revisits))
	}
	if w.Queue > 0 {
		parts = append(parts, fmt.Sprintf("queue=%d", w.Queue))
	}
	if w.Redirect {
		parts = append(parts, "redirect")
	}
	if w.MaxDepth > 0 {
		parts = append(parts, fmt.Sprintf("maxdepth=%d", w.MaxDepth))
	}
	if w.MaxRequests > 0 {
		parts = append(parts, fmt.Sprintf("maxrequests=%d", w.MaxRequests))
	}
	return parts
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
	parts = append(parts, w.Features()...)
	if len(w.Proxies) > 0 {
		var ms []string
		for _, m := range w.Proxies {
			ms = append(ms, m.String())
		}
		parts = append(parts, "proxies="+strings.Join(ms, "+"))
	}
	parts = append(parts, w.Profile.Name, "timeout="+w.Timeout.String())
	return "lib(" + strings.Join(parts, ",") + ")"
}
