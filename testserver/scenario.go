package testserver

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidScenario is wrapped by every error about a scenario that cannot
// be served: an unknown mode or key, a negative count or duration, a status
// outside 400..599.
var ErrInvalidScenario = errors.New("testserver: invalid scenario")

// Mode is how a store answers once its scenario has started. A Hit records
// the Mode that actually answered: Healthy for a normal answer.
type Mode int

// The modes. Scenario documents the fields each one reads.
const (
	Healthy   Mode = iota // normal pages (after Scenario.Latency)
	Degrade               // 503 (or Status), empty body
	Hang                  // accepts the request, never answers; released after Hold or by Close
	Empty                 // 200 with the ~900-byte ConsentShell for every page
	Throttle              // 429 (or Status) with Retry-After
	Blocked               // 403 (or Status) with BlockPage
	Gone                  // 404 (or Status, e.g. 410) for every page
	Slope                 // latency climbs by Step per request, then a mix of 503s and hangs
	Truncated             // declares the full Content-Length, sends Cut bytes, closes
	RateLimit             // token bucket: pages while tokens last, then 429 + Retry-After (or 503)
	Restyled              // product pages in a changed template, full size, no TitleSelector
)

var modeNames = [...]string{"healthy", "degrade", "hang", "empty", "throttle", "blocked", "gone",
	"slope", "truncated", "ratelimit", "restyled"}

// String returns the mode's name as ParseMode and ParseScenario read it.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode returns the mode named s (case-insensitive), e.g. "degrade".
func ParseMode(s string) (Mode, error) {
	for i, name := range modeNames {
		if strings.EqualFold(s, name) {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown mode %q (want one of %s)", ErrInvalidScenario, s, strings.Join(modeNames[:], ", "))
}

// Defaults for the Scenario fields whose zero value stands for a default.
const (
	DefaultHold       = 30 * time.Second      // Hang and Slope hold, and the cap on every wait
	DefaultRetryAfter = time.Second           // Throttle's Retry-After
	DefaultStep       = 25 * time.Millisecond // Slope's latency step per request
	DefaultFailAfter  = 20                    // Slope's requests before failures start
	DefaultRate       = 10.0                  // RateLimit tokens per second
	DefaultBurst      = 1                     // RateLimit bucket size
)

// Scenario says how a store behaves. The first After requests since the
// scenario was set (or since Reset) are answered healthy; from then on the
// Mode decides. Every page follows the scenario, listing pages included (a
// degrading store fails everything), except that Restyled changes product
// pages only, so that a crawl still reaches them.
//
// Fields a mode does not read are ignored. The zero Scenario is a healthy
// store with no added latency.
type Scenario struct {
	Mode Mode

	// After is the number of requests answered healthy before Mode starts:
	// Degrade with After 30 answers 30 pages, then 503s.
	After int

	// Latency is waited before every answer, healthy or not (not before
	// a hang, which waits Hold). Every wait is cut short by Close or by the
	// client going away, and never exceeds Hold.
	Latency time.Duration

	// RecoverAfter, if > 0, makes the store healthy again once this much
	// time (by Config.Now) has passed since the scenario's first non-healthy
	// answer: "degrade after 30, recover after 2 minutes". Any mode.
	RecoverAfter time.Duration

	// Status replaces the failure status of Degrade (503), Throttle (429),
	// Blocked (403), Gone (404), RateLimit (429) and Slope's failures (503).
	// It must be in 400..599. RateLimit sends Retry-After only with 429;
	// Throttle sends it with any status.
	Status int

	// RetryAfter is Throttle's Retry-After, sent in whole seconds rounded
	// up; 0 means DefaultRetryAfter. RateLimit computes its own from the
	// bucket.
	RetryAfter time.Duration

	// Hold bounds a hang (Hang, Slope) and every other wait; 0 means
	// DefaultHold. When a hang ends the connection is closed with no answer.
	Hold time.Duration

	// Step is Slope's added latency per request: request j of the slope
	// waits Latency + j*Step. 0 means DefaultStep.
	Step time.Duration

	// FailAfter is the number of slow-but-healthy requests Slope answers
	// before failing; 0 means DefaultFailAfter. After them Slope repeats
	// 503, 503, hang (503s at the latency the slope reached).
	FailAfter int

	// Rate is RateLimit's refill in tokens per second (0 means DefaultRate),
	// Burst the bucket size (0 means DefaultBurst). The bucket is full when
	// the scenario starts; each page costs one token.
	Rate  float64
	Burst int

	// Cut is how many body bytes Truncated sends before closing the
	// connection; 0 means a third of the page. A Cut not below the page
	// size still cuts one byte short.
	Cut int
}

// Validate reports whether s can be served; the error wraps
// ErrInvalidScenario.
func (s Scenario) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidScenario}, args...)...)
	}
	switch {
	case s.Mode < 0 || int(s.Mode) >= len(modeNames):
		return bad("unknown mode %d", int(s.Mode))
	case s.After < 0:
		return bad("after=%d is negative", s.After)
	case s.Latency < 0, s.RecoverAfter < 0, s.RetryAfter < 0, s.Hold < 0, s.Step < 0:
		return bad("durations must not be negative (latency=%v recover=%v retry=%v hold=%v step=%v)",
			s.Latency, s.RecoverAfter, s.RetryAfter, s.Hold, s.Step)
	case s.Status != 0 && (s.Status < 400 || s.Status > 599):
		return bad("status=%d is not an error status (want 400..599, or 0 for the mode's own)", s.Status)
	case s.FailAfter < 0:
		return bad("failafter=%d is negative", s.FailAfter)
	case s.Rate < 0 || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return bad("rate=%v must be a finite number ≥ 0", s.Rate)
	case s.Burst < 0:
		return bad("burst=%d is negative", s.Burst)
	case s.Cut < 0:
		return bad("cut=%d is negative", s.Cut)
	}
	return nil
}

// withDefaults returns s with its zero-means-default fields filled in.
func (s Scenario) withDefaults() Scenario {
	if s.Hold == 0 {
		s.Hold = DefaultHold
	}
	if s.RetryAfter == 0 {
		s.RetryAfter = DefaultRetryAfter
	}
	if s.Step == 0 {
		s.Step = DefaultStep
	}
	if s.FailAfter == 0 {
		s.FailAfter = DefaultFailAfter
	}
	if s.Rate == 0 {
		s.Rate = DefaultRate
	}
	if s.Burst == 0 {
		s.Burst = DefaultBurst
	}
	if s.Status == 0 {
		switch s.Mode {
		case Throttle, RateLimit:
			s.Status = 429
		case Blocked:
			s.Status = 403
		case Gone:
			s.Status = 404
		default:
			s.Status = 503
		}
	}
	return s
}

// scenarioKeys lists the keys of the text form in the order String writes
// them, with how each is read.
var scenarioKeys = []struct {
	name string
	get  func(*Scenario) string
	set  func(*Scenario, string) error
}{
	{"after", func(s *Scenario) string { return itoa(s.After) }, func(s *Scenario, v string) error { return atoi(v, &s.After) }},
	{"latency", func(s *Scenario) string { return dtoa(s.Latency) }, func(s *Scenario, v string) error { return atod(v, &s.Latency) }},
	{"recover", func(s *Scenario) string { return dtoa(s.RecoverAfter) }, func(s *Scenario, v string) error { return atod(v, &s.RecoverAfter) }},
	{"status", func(s *Scenario) string { return itoa(s.Status) }, func(s *Scenario, v string) error { return atoi(v, &s.Status) }},
	{"retry", func(s *Scenario) string { return dtoa(s.RetryAfter) }, func(s *Scenario, v string) error {
		// Retry-After is seconds on the wire, so a bare number is seconds.
		if n, err := strconv.Atoi(v); err == nil {
			s.RetryAfter = time.Duration(n) * time.Second
			return nil
		}
		return atod(v, &s.RetryAfter)
	}},
	{"hold", func(s *Scenario) string { return dtoa(s.Hold) }, func(s *Scenario, v string) error { return atod(v, &s.Hold) }},
	{"step", func(s *Scenario) string { return dtoa(s.Step) }, func(s *Scenario, v string) error { return atod(v, &s.Step) }},
	{"failafter", func(s *Scenario) string { return itoa(s.FailAfter) }, func(s *Scenario, v string) error { return atoi(v, &s.FailAfter) }},
	{"rate", func(s *Scenario) string {
		if s.Rate == 0 {
			return ""
		}
		return strconv.FormatFloat(s.Rate, 'g', -1, 64)
	}, func(s *Scenario, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("want a number of tokens per second: %w", err)
		}
		s.Rate = f
		return nil
	}},
	{"burst", func(s *Scenario) string { return itoa(s.Burst) }, func(s *Scenario, v string) error { return atoi(v, &s.Burst) }},
	{"cut", func(s *Scenario) string { return itoa(s.Cut) }, func(s *Scenario, v string) error { return atoi(v, &s.Cut) }},
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func dtoa(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func atoi(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a whole number: %w", err)
	}
	*dst = n
	return nil
}

func atod(v string, dst *time.Duration) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want a duration such as 250ms or 2m: %w", err)
	}
	*dst = d
	return nil
}

// ScenarioKeys is the help text for the keys of the text form, one per line.
const ScenarioKeys = `  after=N        answer N requests healthy before the mode starts
  latency=D      wait D before every answer (e.g. 200ms)
  recover=D      healthy again D after the first non-healthy answer
  status=N       failure status (degrade 503, throttle 429, blocked 403, gone 404, ratelimit 429, slope 503)
  retry=N        throttle's Retry-After in seconds (default 1)
  hold=D         longest hang and longest wait (default 30s)
  step=D         slope: latency added per request (default 25ms)
  failafter=N    slope: slow requests before failures start (default 20)
  rate=R         ratelimit: tokens per second (default 10)
  burst=N        ratelimit: bucket size (default 1)
  cut=N          truncated: body bytes sent before the connection closes (default a third)`

// ParseScenario reads the text form "mode" or "mode:key=value,key=value",
// for example "degrade:after=30,recover=2m" or "ratelimit:rate=5,burst=10,status=503".
// ScenarioKeys lists the keys. Durations are Go durations ("250ms", "2m");
// retry also takes bare seconds.
func ParseScenario(text string) (Scenario, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(text), ":")
	m, err := ParseMode(name)
	if err != nil {
		return Scenario{}, err
	}
	s := Scenario{Mode: m}
	if rest != "" {
		for kv := range strings.SplitSeq(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return Scenario{}, fmt.Errorf("%w: %q in %q is not key=value", ErrInvalidScenario, kv, text)
			}
			if err := s.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
				return Scenario{}, err
			}
		}
	}
	return s, s.Validate()
}

// scenarioFromQuery reads a scenario from URL query parameters: mode=... and
// the keys of the text form, as the admin endpoint takes them.
func scenarioFromQuery(q url.Values) (Scenario, error) {
	m, err := ParseMode(q.Get("mode"))
	if err != nil {
		return Scenario{}, err
	}
	s := Scenario{Mode: m}
	for k, vs := range q {
		if k == "mode" {
			continue
		}
		if err := s.set(k, vs[len(vs)-1]); err != nil {
			return Scenario{}, err
		}
	}
	return s, s.Validate()
}

func (s *Scenario) set(key, value string) error {
	for _, k := range scenarioKeys {
		if k.name == strings.ToLower(key) {
			if err := k.set(s, value); err != nil {
				return fmt.Errorf("%w: %s=%q: %w", ErrInvalidScenario, key, value, err)
			}
			return nil
		}
	}
	names := make([]string, len(scenarioKeys))
	for i, k := range scenarioKeys {
		names[i] = k.name
	}
	return fmt.Errorf("%w: unknown key %q (want one of %s)", ErrInvalidScenario, key, strings.Join(names, ", "))
}

// String returns the text form ParseScenario reads, with the fields that are
// not zero: "degrade:after=30,recover=2m0s".
func (s Scenario) String() string {
	var b strings.Builder
	b.WriteString(s.Mode.String())
	sep := byte(':')
	for _, k := range scenarioKeys {
		if v := k.get(&s); v != "" {
			b.WriteByte(sep)
			b.WriteString(k.name)
			b.WriteByte('=')
			b.WriteString(v)
			sep = ','
		}
	}
	return b.String()
}
