package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Case is one generated crawl: the stores it runs against, how the crawler
// is wired, and the fault injected. Everything is drawn from Seed, so the
// same seed is the same case (replay: go run ./chaos -replay SEED).
type Case struct {
	Seed   uint64
	Sites  []Site
	Wiring Wiring
	Fault  Fault
	// Program, when set, makes this a program case: a user's program run
	// as a sequence of processes (program.go); Wiring then gives only its
	// Profile and Timeout, and Fault is none.
	Program *Program
}

// caseSeed derives case i's seed from the run's seed (splitmix64), so that
// one case of a run can be replayed on its own.
func caseSeed(run uint64, i int) uint64 {
	z := run*0x9E3779B97F4A7C15 + uint64(i+1)*0xBF58476D1CE4E5B9
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// programMod and programRem mark a program case's seed: s % programMod ==
// programRem, which about one earlier seed in a million has.
const programMod, programRem = 999983, 4242

// isProgramSeed reports whether seed draws a program case.
func isProgramSeed(seed uint64) bool { return seed%programMod == programRem }

// runSeed is case i's seed in the run of seed run: a fifth of them are
// made program seeds (a program case in place of the case drawn before),
// the others are caseSeed's, as they were.
func runSeed(run uint64, i int) uint64 {
	s := caseSeed(run, i)
	if rand.New(rand.NewPCG(s, 0x510e527fade682d1)).Float64() >= 0.2 {
		return s
	}
	base := s - s%programMod
	if base > math.MaxUint64-programRem {
		base -= programMod
	}
	return base + programRem
}

// draw is the case's random source with helpers.
type draw struct{ r *rand.Rand }

func (d draw) intn(lo, hi int) int   { return lo + d.r.IntN(hi-lo+1) } // in [lo, hi]
func (d draw) chance(p float64) bool { return d.r.Float64() < p }
func (d draw) ms(lo, hi int) time.Duration {
	return time.Duration(d.intn(lo, hi)) * time.Millisecond
}

// pick returns an index drawn by weight.
func (d draw) pick(weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := d.r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

// NewCase draws the case of seed.
func NewCase(seed uint64) Case {
	d := draw{rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))}
	c := Case{Seed: seed}
	c.Wiring = drawWiring(d)
	c.Fault = drawFault(d, c.Wiring)
	n := []int{1, 1, 2, 2, 3, 4, 6, 8}[d.r.IntN(8)]
	for range n {
		c.Sites = append(c.Sites, drawSite(d, c.Wiring))
	}
	// Dimensions added later draw from a stream of their own, so that the
	// cases of earlier seeds stay as they were.
	d2 := draw{rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))}
	if c.Wiring.Process && d2.chance(0.3) {
		// Redis mode: 1-3 workers share the crawl; the fault is Redis
		// lost, or none.
		c.Wiring.Workers = d2.intn(1, 3)
		c.Fault = Fault{At: d2.ms(100, 1500)}
		if d2.chance(0.5) {
			c.Fault.Kind = fRedisRestart
			c.Fault.Persist = d2.chance(0.5)
			// A worker started after Redis came back empty (a fleet
			// scaling up, a restart) must not take it for a new crawl.
			c.Fault.Late = !c.Fault.Persist && c.Wiring.Workers >= 2 && d2.chance(0.5)
		}
	}
	if !c.Wiring.Process {
		c.Wiring.HasVisited = d2.chance(0.3)
		if d2.chance(0.3) {
			c.Wiring.IdleTTL = d2.ms(5, 300)
		}
	}
	// The Colly features: a third stream, so that every
	// earlier seed keeps the dimensions it had.
	d3 := draw{rand.New(rand.NewPCG(seed, 0x3c6ef372fe94f82b))}
	if !c.Wiring.Process {
		drawFeatures(d3, &c.Wiring)
	}
	// Proxy pools: a fourth stream. Not for a crawl with no
	// limit at all (async, no LimitRule, no pacing): the local test
	// proxies, a new connection a request (Colly's SetProxyFunc turns
	// keep-alives off), time out under it on 2 cores, at every proxy
	// alike (chaos/SEEDS.md, 11173168168715445497).
	d4 := draw{rand.New(rand.NewPCG(seed, 0xa54ff53a5f1d36f1))}
	if !c.Wiring.Process && c.Wiring.Concurrency() > 0 && d4.chance(0.25) {
		drawProxies(d4, &c.Wiring)
	}
	// Programs and run sequences: a seed of their own kind (programSeed),
	// so that every earlier seed keeps its case.
	if isProgramSeed(seed) {
		d5 := draw{rand.New(rand.NewPCG(seed, 0x510e527fade682d1))}
		p, sites := drawProgram(d5)
		c.Program, c.Sites, c.Fault = &p, sites, Fault{}
		c.Wiring = Wiring{Profile: c.Wiring.Profile, Timeout: c.Wiring.Timeout, Async: p.Async, Checkpoint: cpBolt}
	}
	return c
}

// String is the case on one line.
func (c Case) String() string {
	var b strings.Builder
	if c.Program != nil {
		fmt.Fprintf(&b, "seed=%d %s %s timeout=%v sites=[", c.Seed, c.Program, c.Wiring.Profile.Name, c.Wiring.Timeout)
	} else {
		fmt.Fprintf(&b, "seed=%d %s fault=%s sites=[", c.Seed, c.Wiring, c.Fault)
	}
	for i, s := range c.Sites {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(s.String())
	}
	b.WriteString("]")
	return b.String()
}

// throttleCost is the longest n throttled requests in a row can keep a
// crawl on one domain: each waits the Retry-After ra or the domain's gap,
// which doubles at each throttle from 20 ms up to a minute
// (Pacing.MaxGap), and the domain is held open once it has throttled for
// the pacing horizon (5 minutes), after at most one more gap.
func throttleCost(ra time.Duration, n int) time.Duration {
	const maxGap, horizon = time.Minute, 5 * time.Minute
	limit := horizon + maxGap + ra + 5*time.Second
	var total time.Duration
	gap := 10 * time.Millisecond
	for range n {
		gap = min(2*gap, maxGap)
		total += max(ra, gap) + 500*time.Millisecond
		if total >= limit {
			return limit
		}
	}
	return total
}

// Replay is the one-line command that runs exactly this case again.
func (c Case) Replay() string {
	return fmt.Sprintf("go run ./chaos -v -replay %d", c.Seed)
}

// Bound is how long the case may take before it counts as a hang
// (invariant 1): a generous sum of what each store can cost the crawl.
func (c Case) Bound() time.Duration {
	if c.Program != nil {
		return c.programBound()
	}
	w := c.Wiring
	// The pages' pace: what the user's limits allow (a redirect lets the
	// products past a per-host rule, which the listings still keep).
	nr := w
	nr.Redirect = false
	p := time.Duration(max(1, nr.Concurrency()))
	if w.Async && nr.Concurrency() == 0 {
		p = 8 // no limit of the user's: many at once
	}
	// Colly sleeps a LimitRule's Delay (and up to its RandomDelay) inside
	// the rule's slot after each request.
	delay := w.Delay + w.RandomDelay
	need := time.Duration(w.Profile.Settings().FailuresToTrip())
	total := 3 * time.Second
	for _, s := range c.Sites {
		listings := s.Products/max(1, s.PerPage) + 2
		gone := listings * s.Extra404
		if w.RetryLoop {
			// The user's loop retries every error three times, a 404 too.
			gone *= 4
		}
		pages := time.Duration(s.Products + listings + gone)
		cost := pages * (s.Latency + 8*time.Millisecond + delay) / p
		if w.Redirect {
			cost += pages * (2*time.Millisecond + delay) / p // a product's first hop
		}
		// Each revisit of the start page, one after the other.
		cost += time.Duration(w.Revisits) * (s.Latency + 50*time.Millisecond + delay)
		if w.Clone {
			// The clone is not wired (as Colly's _examples/coursera_courses
			// would leave it): a product it asks for once the site's
			// circuit is open is refused at the transport, inside Colly's
			// LimitRule slot, whose Delay is slept as for any request,
			// and the user's loop asks again three times.
			refused := time.Duration(s.Products)
			if w.RetryLoop {
				refused *= 4
			}
			cost += refused * delay / p
		}
		switch s.Kind {
		case kHangStart, kHangAfter, kSlope:
			// At most need + P - 1 requests that wait for the timeout,
			// one at a time at worst: the breaker lets a domain with no
			// success yet in this run (a hang from the start, or any
			// domain after a resume) have one request in flight.
			cost += (need + p - 1) * w.Timeout
		case kThrottle:
			// Each throttled URL is sent again after each pause, up to
			// ThrottleRetries times, and again by the user's loop, each
			// retry with a budget of its own. Every throttle in a row
			// doubles the domain's gap (to a minute), until the domain
			// has throttled for the pacing horizon and is held open.
			urls := 1 // sustained from the start: the start URL alone
			if s.After > 0 {
				urls = int(pages)
			}
			sends := urls * (w.ThrottleRetries() + 1)
			if w.RetryLoop {
				sends *= 4
			}
			ra := s.RetryAfter
			if s.RA == raDate {
				ra += time.Second // an HTTP-date: whole seconds, a second added
			}
			cost += throttleCost(ra, sends)
		case kThrottleBurst:
			cost += s.Recover + 3*(s.RetryAfter+500*time.Millisecond)
		case kRateLimit:
			// A crawler pacing itself by backing off at each 429 runs
			// below the site's rate, not at it: half of it, say.
			cost += time.Duration(float64(pages)/(s.Rate/2)*float64(time.Second)) + 3*time.Second
			if w.Workers > 1 {
				// Workers pace the site each on their own, so their
				// requests collide in its bucket, and each 429 pauses
				// them all for a Retry-After in whole seconds, while
				// every throttle doubles a worker's gap: a second a page.
				cost = max(cost, pages*time.Second)
			}
		}
		total += cost
	}
	if c.Fault.Kind == fKill || c.Fault.Kind == fCorrupt || c.Fault.Kind == fQuit {
		total += c.Fault.At
	}
	if w.Workers > 0 {
		// Failed jobs come back after a jittered backoff (the first under
		// 15 s) that a worker waits for when it is due within its
		// -wait-horizon (2 s here, 17 s with Redis lost).
		total += 15 * time.Second
	}
	if c.Fault.Kind == fRedisRestart {
		// A worker that lost Redis tries it again at most 15 s later
		// (plus a tenth as jitter), then the crawl goes on; a job whose
		// settle was lost in the outage comes back after its lease,
		// max(4 × timeout, 1 min).
		total += c.Fault.At + 20*time.Second + max(4*w.Timeout, time.Minute)
	}
	return total * 3 / 2
}
