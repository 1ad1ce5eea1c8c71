package breaker

import (
	"fmt"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// Option configures a Breaker.
type Option func(*Breaker) error

// Validator judges whether a fetched response is usable data;
// extensions/validate implements it.
type Validator interface {
	// Check reports whether a fetched response is usable data. It is called
	// once per response, after every OnHTML callback ran (from the
	// breaker's OnScraped), and for 2xx responses Colly v2.3.0 routes to
	// OnError. nil means valid; otherwise the page is class Invalid, counts
	// against the domain's breaker, and the error's text is the reason.
	Check(r *colly.Response) error
}

// WithValidator makes every 2xx go through v: a page v rejects is Invalid
// and counts against the breaker. Register v on the collector before the
// breaker.
func WithValidator(v Validator) Option {
	return func(b *Breaker) error {
		b.validator = v
		return nil
	}
}

// WithLogger makes the breaker log every transition and alarm as one
// structured event. Without it the breaker is silent.
func WithLogger(l zerolog.Logger) Option {
	return func(b *Breaker) error {
		b.log = l
		return nil
	}
}

// WithClock sets the time source (tests use clock.Fake). Default
// clock.System.
func WithClock(c clock.Clock) Option {
	return func(b *Breaker) error {
		b.clock = clock.OrSystem(c)
		return nil
	}
}

// WithStore sets where circuits live. Default MemoryStore; storage/redis
// shares them between workers.
func WithStore(s Store) Option {
	return func(b *Breaker) error {
		if s == nil {
			return fmt.Errorf("breaker: WithStore(nil): pass a Store, or leave the option out for the in-process default")
		}
		b.store = s
		return nil
	}
}

// WithDomainProfile gives the hosts matching pattern their own profile:
// pattern is an exact host ("shop.example.com", "127.0.0.1:8080") or a
// suffix starting with a dot (".example.com" matches every subdomain and
// example.com itself). The most specific match wins: an exact host, then
// the longest suffix.
func WithDomainProfile(pattern string, p Profile) Option {
	return func(b *Breaker) error {
		pattern = strings.ToLower(strings.TrimSpace(pattern))
		if pattern == "" || pattern == "." {
			return fmt.Errorf("breaker: WithDomainProfile: empty pattern; give a host or a suffix such as .example.com")
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("breaker: profile for %q: %w", pattern, err)
		}
		b.overrides = append(b.overrides, override{pattern: pattern, profile: p})
		return nil
	}
}

// withAlarmAfter sets how many throttled (429) or blocked (403) answers in
// a row from one domain raise a warning event (default 10). They never trip
// the breaker: they mean "fix your client", not "the target is down".
func withAlarmAfter(n int) Option {
	return func(b *Breaker) error {
		if n < 1 {
			return fmt.Errorf("breaker: withAlarmAfter(%d): must be at least 1", n)
		}
		b.alarmAfter = n
		return nil
	}
}

// withThrottleRetries sets how many times one URL answered 429 is sent
// again after the pause (default 10). A throttled attempt does not spend
// any other retry budget; past this many the URL is reported with
// GaveUp set, never dropped silently.
func withThrottleRetries(n int) Option {
	return func(b *Breaker) error {
		if n < 0 {
			return fmt.Errorf("breaker: withThrottleRetries(%d): must be 0 or more", n)
		}
		b.throttleRetries = n
		return nil
	}
}

// Hooks are the breaker's callbacks. Each is called in the goroutine
// that caused the event, and must not block; a nil one is not called.
type Hooks struct {
	// OnTransition is called after every state change of any domain's
	// circuit.
	OnTransition func(Transition)
	// OnRefused is called for every request the breaker refused, with the
	// refusal. The request never reached the network; the hook is where a
	// checkpoint parks it so it is not lost.
	OnRefused func(r *colly.Request, err *CircuitOpenError)
	// OnAttempt is called once for every attempt that left, with its
	// classified result (after validation). Refused requests go to
	// OnRefused instead.
	OnAttempt func(Attempt)
	// OnDegrading is called when a domain's median success latency climbs
	// past its profile's slope (SlopeMultiple × the baseline), with the
	// median and the baseline.
	OnDegrading func(domain string, median, baseline time.Duration)
}

// WithHooks adds h's hooks. It may be given more than once: every hook
// given is called, in the order given.
func WithHooks(h Hooks) Option {
	return func(b *Breaker) error {
		if h.OnTransition != nil {
			b.onTransition = append(b.onTransition, h.OnTransition)
		}
		if h.OnRefused != nil {
			b.onRefused = append(b.onRefused, h.OnRefused)
		}
		if h.OnAttempt != nil {
			b.onOutcome = append(b.onOutcome, h.OnAttempt)
		}
		if h.OnDegrading != nil {
			b.onDegrading = append(b.onDegrading, h.OnDegrading)
		}
		return nil
	}
}

type override struct {
	pattern string
	profile Profile
}

// profileFor resolves host's profile: exact match, then longest suffix.
func (b *Breaker) profileFor(host string) Profile {
	best, bestLen := b.profile, -1
	hostname := host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		hostname = host[:i]
	}
	for _, o := range b.overrides {
		switch {
		case o.pattern == host:
			return o.profile
		case o.pattern[0] == '.':
			if (strings.HasSuffix(hostname, o.pattern) || hostname == o.pattern[1:]) && len(o.pattern) > bestLen {
				best, bestLen = o.profile, len(o.pattern)
			}
		}
	}
	return best
}

// WithPacing sets each domain's ceiling pace (see Pacing). Without it a
// domain has no in-flight limit or gap of Breakwater's own until a 429
// slows it down.
func WithPacing(p Pacing) Option {
	return func(b *Breaker) error {
		if p.Parallelism < 0 || p.MinGap < 0 {
			return fmt.Errorf("breaker: WithPacing(%+v): Parallelism and MinGap must be 0 (none) or more", p)
		}
		b.pacing = p
		return nil
	}
}

// withRand sets the source of the jitter drawn for grown cooldowns: a
// function returning a number in [0, 1). Default math/rand/v2's Float64.
func withRand(f func() float64) Option {
	return func(b *Breaker) error {
		if f == nil {
			return fmt.Errorf("breaker: withRand(nil): pass a function, or leave the option out")
		}
		b.rand = f
		return nil
	}
}
