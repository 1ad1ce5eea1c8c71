package profiles

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// kind is how a field is written in the file.
type kind uint8

const (
	whole   kind = iota // an integer
	number              // an integer or a fraction
	flag                // true or false
	seconds             // a number of seconds, fractions allowed
	millis              // a number of milliseconds, fractions allowed
)

// want describes the kind for an error message.
func (k kind) want() string {
	switch k {
	case whole:
		return "a whole number"
	case number:
		return "a number"
	case flag:
		return "true or false"
	case seconds:
		return "a number of seconds (fractions allowed)"
	default:
		return "a number of milliseconds (fractions allowed)"
	}
}

// unit is the duration one unit of a seconds or millis field stands for.
func (k kind) unit() time.Duration {
	if k == millis {
		return time.Millisecond
	}
	return time.Second
}

// field is one setting of a profile: its key in the file, the
// breaker.Profile field it sets (as Profile.Validate's error names it),
// and how it is read and written.
type field struct {
	key      string
	goName   string
	kind     kind
	required bool // a profile that starts from nothing must set it
	set      func(p *breaker.Profile, v value)
	get      func(p breaker.Profile) value
}

// value is a decoded setting; only the member of the field's kind is used.
type value struct {
	i int
	f float64
	b bool
	d time.Duration
}

// fields are the settings of a profile, in the order the documentation
// lists them: the four every profile sets, then the rest of breaker.Profile.
var fields = []field{
	{key: "window_size", goName: "WindowSize", kind: whole, required: true,
		set: func(p *breaker.Profile, v value) { p.WindowSize = v.i },
		get: func(p breaker.Profile) value { return value{i: p.WindowSize} }},
	{key: "failure_threshold", goName: "FailureThreshold", kind: number, required: true,
		set: func(p *breaker.Profile, v value) { p.FailureThreshold = v.f },
		get: func(p breaker.Profile) value { return value{f: p.FailureThreshold} }},
	{key: "cooldown_seconds", goName: "Cooldown", kind: seconds, required: true,
		set: func(p *breaker.Profile, v value) { p.Cooldown = v.d },
		get: func(p breaker.Profile) value { return value{d: p.Cooldown} }},
	{key: "half_open_probes", goName: "HalfOpenProbes", kind: whole, required: true,
		set: func(p *breaker.Profile, v value) { p.HalfOpenProbes = v.i },
		get: func(p breaker.Profile) value { return value{i: p.HalfOpenProbes} }},
	{key: "consecutive_failures", goName: "ConsecutiveFailures", kind: whole,
		set: func(p *breaker.Profile, v value) { p.ConsecutiveFailures = v.i },
		get: func(p breaker.Profile) value { return value{i: p.ConsecutiveFailures} }},
	{key: "slow_call_seconds", goName: "SlowCall", kind: seconds,
		set: func(p *breaker.Profile, v value) { p.SlowCall = v.d },
		get: func(p breaker.Profile) value { return value{d: p.SlowCall} }},
	{key: "slow_call_rate", goName: "SlowCallRate", kind: number,
		set: func(p *breaker.Profile, v value) { p.SlowCallRate = v.f },
		get: func(p breaker.Profile) value { return value{f: p.SlowCallRate} }},
	{key: "slope_multiple", goName: "SlopeMultiple", kind: number,
		set: func(p *breaker.Profile, v value) { p.SlopeMultiple = v.f },
		get: func(p breaker.Profile) value { return value{f: p.SlopeMultiple} }},
	{key: "slope_floor_ms", goName: "SlopeFloor", kind: millis,
		set: func(p *breaker.Profile, v value) { p.SlopeFloor = v.d },
		get: func(p breaker.Profile) value { return value{d: p.SlopeFloor} }},
	{key: "slope_trip", goName: "SlopeTrip", kind: flag,
		set: func(p *breaker.Profile, v value) { p.SlopeTrip = v.b },
		get: func(p breaker.Profile) value { return value{b: p.SlopeTrip} }},
	{key: "max_cooldown_seconds", goName: "MaxCooldown", kind: seconds,
		set: func(p *breaker.Profile, v value) { p.MaxCooldown = v.d },
		get: func(p breaker.Profile) value { return value{d: p.MaxCooldown} }},
	{key: "timeout_multiple", goName: "TimeoutMultiple", kind: number,
		set: func(p *breaker.Profile, v value) { p.TimeoutMultiple = v.f },
		get: func(p breaker.Profile) value { return value{f: p.TimeoutMultiple} }},
	{key: "timeout_floor_ms", goName: "TimeoutFloor", kind: millis,
		set: func(p *breaker.Profile, v value) { p.TimeoutFloor = v.d },
		get: func(p breaker.Profile) value { return value{d: p.TimeoutFloor} }},
	{key: "timeout_after", goName: "TimeoutAfter", kind: whole,
		set: func(p *breaker.Profile, v value) { p.TimeoutAfter = v.i },
		get: func(p breaker.Profile) value { return value{i: p.TimeoutAfter} }},
}

// keyExtends names the profile a profile starts from.
const keyExtends = "extends"

var (
	byKey    = map[string]*field{}
	byGoName = map[string]*field{}
	// related points a field whose rule involves another to that other
	// one, so an error about a field the profile did not set can point at
	// the line it did set.
	related = map[string]string{
		"SlowCallRate": "SlowCall",
		"SlopeTrip":    "SlopeMultiple",
		"MaxCooldown":  "Cooldown",
		"TimeoutAfter": "TimeoutMultiple",
	}
	// goToKey rewrites breaker.Profile field names in a Validate reason
	// into the keys of the file. Longer names come first, so SlowCallRate
	// is not read as SlowCall followed by "Rate".
	goToKey *strings.Replacer
)

func init() {
	names := make([]*field, len(fields))
	for i := range fields {
		f := &fields[i]
		byKey[f.key], byGoName[f.goName], names[i] = f, f, f
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i].goName) > len(names[j].goName) })
	var pairs []string
	for _, f := range names {
		pairs = append(pairs, f.goName, f.key)
	}
	goToKey = strings.NewReplacer(pairs...)
}

// format writes v as the file would write it.
func (f *field) format(v value) string {
	switch f.kind {
	case whole:
		return strconv.Itoa(v.i)
	case number:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case flag:
		return strconv.FormatBool(v.b)
	default:
		return strconv.FormatFloat(float64(v.d)/float64(f.kind.unit()), 'f', -1, 64)
	}
}

// toDuration converts a number of units to a Duration, refusing what a
// Duration cannot hold.
func toDuration(n float64, unit time.Duration) (time.Duration, bool) {
	ns := n * float64(unit)
	if math.IsNaN(ns) || math.IsInf(ns, 0) || math.Abs(ns) >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(math.Round(ns)), true
}
