package profiles_test

import (
	"errors"
	"github.com/breakwater-crawl/breakwater/circuit"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// A profile whose circuit fields are all set, for cases that break one
// more thing in it.
const head = "breaker_profiles:\n  p:\n    extends: standard\n"

func TestEveryKindOfMistakeNamesFileLineAndField(t *testing.T) {
	cases := []struct {
		name   string
		yaml   string
		line   int
		path   string
		value  string
		reason string // a phrase the reason must hold
		field  string // the breaker.Profile field for out-of-range values
	}{
		// Out of range: breaker.Profile.Validate, at the line that set it.
		{"threshold above 1", head + "    window_size: 10\n    failure_threshold: 1.5\n", 5,
			"breaker_profiles.p.failure_threshold", "1.5", "must be in (0, 1]", "FailureThreshold"},
		{"window of 0", head + "    window_size: 0\n", 4, "breaker_profiles.p.window_size", "0", "at least 1", "WindowSize"},
		{"negative cooldown", head + "    cooldown_seconds: -1\n", 4, "breaker_profiles.p.cooldown_seconds", "-1", "above 0", "Cooldown"},
		{"a cooldown too short to hold", head + "    cooldown_seconds: 1e-12\n", 4, "breaker_profiles.p.cooldown_seconds", "1e-12", "above 0", "Cooldown"},
		{"no probes", head + "    half_open_probes: 0\n", 4, "breaker_profiles.p.half_open_probes", "0", "at least 1", "HalfOpenProbes"},
		{"negative consecutive failures", head + "    consecutive_failures: -2\n", 4, "breaker_profiles.p.consecutive_failures", "-2", "0 (off) or more", "ConsecutiveFailures"},
		{"slow-call rate above 1", head + "    slow_call_rate: 2\n", 4, "breaker_profiles.p.slow_call_rate", "2", "in (0, 1]", "SlowCallRate"},
		{"slope multiple of 1", head + "    slope_multiple: 1\n", 4, "breaker_profiles.p.slope_multiple", "1", "above 1", "SlopeMultiple"},
		{"negative slope floor", head + "    slope_floor_ms: -5\n", 4, "breaker_profiles.p.slope_floor_ms", "-5", "0 or more", "SlopeFloor"},
		{"slope trip without a slope", head + "    slope_multiple: 0\n    slope_trip: true\n", 5, "breaker_profiles.p.slope_trip", "true", "slope_multiple", "SlopeTrip"},
		{"timeout multiple below 1", head + "    timeout_multiple: 0.5\n", 4, "breaker_profiles.p.timeout_multiple", "0.5", "at least 1", "TimeoutMultiple"},
		{"negative timeout floor", head + "    timeout_floor_ms: -1\n", 4, "breaker_profiles.p.timeout_floor_ms", "-1", "0 or more", "TimeoutFloor"},
		{"timeout without successes to learn from", head + "    timeout_after: 0\n", 4, "breaker_profiles.p.timeout_after", "0", "at least 1 success", "TimeoutAfter"},
		{"max cooldown below cooldown", head + "    max_cooldown_seconds: 30\n", 4, "breaker_profiles.p.max_cooldown_seconds", "30", "at least cooldown", "MaxCooldown"},
		// A rule broken by a field the profile did not set: the line of
		// the field it did set, the inherited value, and where it came from.
		{"inherited max cooldown below a new cooldown", head + "    cooldown_seconds: 900\n", 4,
			"breaker_profiles.p.max_cooldown_seconds", "600", "comes from standard", "MaxCooldown"},
		{"slow call without a rate", "breaker_profiles:\n  p:\n    window_size: 5\n    failure_threshold: 0.5\n    cooldown_seconds: 10\n    half_open_probes: 1\n    slow_call_seconds: 2\n", 7,
			"breaker_profiles.p.slow_call_rate", "0", "set both slow_call_seconds and slow_call_rate", "SlowCallRate"},

		// Unknown fields, with the likely intended one.
		{"unknown profile field", head + "    windowsize: 10\n", 4, "breaker_profiles.p.windowsize", "", "did you mean window_size?", ""},
		{"a duration without its unit", head + "    cooldown: 30\n", 4, "breaker_profiles.p.cooldown", "", "in seconds: write cooldown_seconds", ""},
		{"a duration in the wrong unit", head + "    timeout_floor_seconds: 1\n", 4, "breaker_profiles.p.timeout_floor_seconds", "", "in milliseconds: write timeout_floor_ms", ""},
		{"unknown field, nothing close", head + "    colour: blue\n", 4, "breaker_profiles.p.colour", "", "known: extends, window_size", ""},
		{"unknown top-level field", "breaker_profile:\n  p: {extends: standard}\n", 1, "breaker_profile", "", "did you mean breaker_profiles?", ""},
		{"YAML merge key", head + "    <<: {window_size: 3}\n", 4, "breaker_profiles.p.<<", "", "start from another profile with extends", ""},

		// Wrong types.
		{"words for a number", head + "    window_size: ten\n", 4, "breaker_profiles.p.window_size", "ten", `want a whole number, got the string "ten"`, ""},
		{"a quoted number", head + "    window_size: \"10\"\n", 4, "breaker_profiles.p.window_size", "10", `got the string "10"`, ""},
		{"a fraction for a whole number", head + "    half_open_probes: 1.5\n", 4, "breaker_profiles.p.half_open_probes", "1.5", "want a whole number, got a number", ""},
		{"a Go duration for seconds", head + "    cooldown_seconds: 5m\n", 4, "breaker_profiles.p.cooldown_seconds", "5m", "not a duration: write 300", ""},
		{"a Go duration for milliseconds", head + "    slope_floor_ms: 1.5s\n", 4, "breaker_profiles.p.slope_floor_ms", "1.5s", "not a duration: write 1500", ""},
		{"yes for true", head + "    slope_trip: yes\n", 4, "breaker_profiles.p.slope_trip", "yes", `want true or false, got the string "yes"`, ""},
		{"a number for a boolean", head + "    slope_trip: 1\n", 4, "breaker_profiles.p.slope_trip", "1", "want true or false, got a number", ""},
		{"a list for a number", head + "    window_size: [1, 2]\n", 4, "breaker_profiles.p.window_size", "", "got a list", ""},
		{"no value", head + "    window_size:\n", 4, "breaker_profiles.p.window_size", "", "no value: want a whole number", ""},
		{"not a number at all", head + "    slope_multiple: .nan\n", 4, "breaker_profiles.p.slope_multiple", ".nan", "finite", ""},
		{"infinite seconds", head + "    cooldown_seconds: .inf\n", 4, "breaker_profiles.p.cooldown_seconds", ".inf", "finite", ""},
		{"seconds past a Duration", head + "    cooldown_seconds: 1e12\n", 4, "breaker_profiles.p.cooldown_seconds", "1e12", "292 years", ""},
		{"a whole number too large", head + "    window_size: 99999999999999999999\n", 4, "breaker_profiles.p.window_size", "99999999999999999999", "whole number", ""},
		{"profiles as a list", "breaker_profiles:\n  - standard\n", 2, "breaker_profiles", "", "want a mapping of profile names", ""},
		{"a profile with no body", "breaker_profiles:\n  p:\n", 2, "breaker_profiles.p", "", "no settings", ""},
		{"a profile that is a string", "breaker_profiles:\n  p: standard\n", 2, "breaker_profiles.p", "", "want a mapping of settings", ""},
		{"default as a number", "default: 3\n", 1, "default", "", "want the name of a profile, got a number", ""},
		{"domains as a list", "domains:\n  - x.com\n", 2, "domains", "", "want a mapping of host patterns", ""},
		{"a domain's profile as a mapping", "domains:\n  x.com: {window_size: 3}\n", 2, "domains.x.com", "", "want the name of a profile, got a mapping", ""},
		{"the whole file a list", "- a\n- b\n", 1, "", "", "want a mapping with breaker_profiles", ""},
		{"a bad profile name", "breaker_profiles:\n  \"my profile\": {extends: standard}\n", 2, "breaker_profiles.my profile", "", "a profile name is letters", ""},

		// Written twice.
		{"a field twice", head + "    window_size: 10\n    window_size: 20\n", 5, "breaker_profiles.p.window_size", "", "written twice (first at line 4)", ""},
		{"a profile twice", head + "  p:\n    extends: aggressive\n", 4, "breaker_profiles.p", "", "written twice (first at line 2)", ""},
		{"a pattern twice, in another case", "domains:\n  x.com: standard\n  X.com: aggressive\n", 3, "domains.X.com", "", "same pattern as line 2", ""},

		// References to profiles nobody defines.
		{"extends nothing", head[:len(head)-len("    extends: standard\n")] + "    extends: sturdy\n", 3, "breaker_profiles.p.extends", "sturdy", "no profile of that name (built in: conservative, standard, aggressive; defined here: p)", ""},
		{"default nothing", head + "default: fragile\n", 4, "default", "fragile", "no profile of that name", ""},
		{"a domain's profile nothing", head + "domains:\n  x.com: fragile\n", 5, "domains.x.com", "fragile", "no profile of that name", ""},
		{"extends itself", "breaker_profiles:\n  p:\n    extends: p\n", 3, "breaker_profiles.p.extends", "p", "cannot extend itself", ""},
		{"extends in a cycle", "breaker_profiles:\n  a: {extends: b}\n  b: {extends: c}\n  c: {extends: a}\n", 4, "breaker_profiles.c.extends", "a", "cycle: c → a → b → c", ""},
		{"a new profile without its circuit", "breaker_profiles:\n  p:\n    window_size: 10\n    failure_threshold: 0.5\n", 2, "breaker_profiles.p", "",
			"needs cooldown_seconds, half_open_probes; or give extends", ""},

		// Domain patterns breaker.Config.Domains would not match.
		{"a URL for a host", "domains:\n  https://shop.example.com/: standard\n", 2, "domains", "https://shop.example.com/", "a host, not a URL", ""},
		{"a wildcard", "domains:\n  \"*.example.com\": standard\n", 2, "domains", "*.example.com", "leading dot", ""},
		{"a port out of range", "domains:\n  shop.example.com:70000: standard\n", 2, "domains", "shop.example.com:70000", "1 to 65535", ""},
		{"a suffix with a port", "domains:\n  .example.com:8080: standard\n", 2, "domains", ".example.com:8080", "matches any port", ""},
		{"IPv6 without brackets", "domains:\n  \"::1\": standard\n", 2, "domains", "::1", "in brackets", ""},
		{"a trailing dot", "domains:\n  example.com.: standard\n", 2, "domains", "example.com.", "trailing dot", ""},
		{"an empty label", "domains:\n  shop..example.com: standard\n", 2, "domains", "shop..example.com", "empty label", ""},
		{"a bare dot", "domains:\n  \".\": standard\n", 2, "domains", ".", "empty pattern", ""},
		{"unicode", "domains:\n  bücher.example: standard\n", 2, "domains", "bücher.example", "xn--", ""},

		// Not YAML, or not one document.
		{"a syntax error", "breaker_profiles:\n  p: [1, 2\n", 2, "", "", "not valid YAML", ""},
		{"a syntax error on the first line", "default: standard: x\n", 1, "", "", "mapping values are not allowed", ""},
		{"a key out of line", "breaker_profiles:\n  p:\n    extends: standard\n   window_size: 3\n", 2, "", "", "did not find expected key (in what starts here)", ""},
		{"an unclosed quote", "default: 'standard\n", 2, "", "", "not valid YAML", ""},
		{"a tab", "breaker_profiles:\n\tp: {}\n", 2, "", "", "not valid YAML", ""},
		{"two documents", "default: standard\n---\ndefault: aggressive\n", 2, "", "", "second YAML document", ""},
		{"an empty file", "", 0, "", "", "the file is empty", ""},
		{"only comments", "# nothing yet\n", 0, "", "", "the file is empty", ""},
		{"only null", "~\n", 1, "", "", "the file is empty", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, err := profiles.Parse("profiles.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", set)
			}
			if set != nil {
				t.Errorf("a Set came back with the error")
			}
			var e *profiles.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *profiles.Error", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("want exactly one error, got:\n%v", err)
			}
			if !errors.Is(err, profiles.ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) is false")
			}
			if e.File != "profiles.yaml" || e.Line != tc.line || e.Path != tc.path || e.Value != tc.value {
				t.Errorf("got file %q line %d path %q value %q\nwant file profiles.yaml line %d path %q value %q\n(%v)",
					e.File, e.Line, e.Path, e.Value, tc.line, tc.path, tc.value, err)
			}
			if !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", e.Reason, tc.reason)
			}
			var pe *circuit.ProfileError
			switch {
			case tc.field != "" && !errors.As(err, &pe):
				t.Errorf("an out-of-range value should carry the *circuit.ProfileError")
			case tc.field != "" && pe.Field != tc.field:
				t.Errorf("ProfileError.Field = %s, want %s", pe.Field, tc.field)
			case tc.field != "" && !errors.Is(err, breaker.ErrInvalidProfile):
				t.Errorf("errors.Is(err, breaker.ErrInvalidProfile) is false")
			case tc.field == "" && errors.As(err, &pe):
				t.Errorf("not a range error, yet it carries %v", pe)
			}
		})
	}
}

func TestTheMessageReadsFileLinePathValueReason(t *testing.T) {
	_, err := profiles.Parse("conf/profiles.yaml", []byte(`breaker_profiles:
  fragile:
    extends: conservative
    window_size: 10
    failure_threshold: 1.5
`))
	want := "conf/profiles.yaml:5: breaker_profiles.fragile.failure_threshold: 1.5: must be in (0, 1]"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q\nwant it to start %q", err, want)
	}
	_, err = profiles.Parse("empty.yaml", nil)
	if err == nil || err.Error() != "empty.yaml: the file is empty: want breaker_profiles, and optionally default and domains" {
		t.Fatalf("a whole-file error has no line: %q", err)
	}
}

func TestEveryMistakeIsReportedOnceInLineOrder(t *testing.T) {
	_, err := profiles.Parse("profiles.yaml", []byte(`default: ghost
breaker_profiles:
  a:
    extends: standard
    window_size: ten
  b:
    extends: a
  c:
    window_size: 10
  d:
    extends: standard
    failure_threshold: 2
domains:
  x.com: a
  y.com: nobody
`))
	if err == nil {
		t.Fatal("accepted")
	}
	// b and x.com depend on a, whose error is reported once, at its line.
	want := []string{
		`profiles.yaml:1: default: ghost: no profile of that name`,
		`profiles.yaml:5: breaker_profiles.a.window_size: ten: want a whole number`,
		`profiles.yaml:8: breaker_profiles.c: a new profile starts from nothing and needs failure_threshold, cooldown_seconds, half_open_probes`,
		`profiles.yaml:12: breaker_profiles.d.failure_threshold: 2: must be in (0, 1]`,
		`profiles.yaml:15: domains.y.com: nobody: no profile of that name`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s...", i+1, lines[i], want[i])
		}
	}
	var e *profiles.Error
	if !errors.As(err, &e) || e.Line != 1 {
		t.Errorf("errors.As finds the first error: %+v", e)
	}
	if !errors.Is(err, profiles.ErrInvalid) || !errors.Is(err, breaker.ErrInvalidProfile) {
		t.Errorf("the joined error matches ErrInvalid, and ErrInvalidProfile through d's range error")
	}
}
