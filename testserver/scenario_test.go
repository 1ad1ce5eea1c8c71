package testserver

import (
	"errors"
	"testing"
	"time"
)

func TestParseScenarioReadsTheTextForm(t *testing.T) {
	cases := []struct {
		text string
		want Scenario
	}{
		{"healthy", Scenario{}},
		{"DEGRADE:after=30", Scenario{Mode: Degrade, After: 30}},
		{"degrade:after=30,recover=2m", Scenario{Mode: Degrade, After: 30, RecoverAfter: 2 * time.Minute}},
		{"empty:after=50", Scenario{Mode: Empty, After: 50}},
		{"throttle:retry=5", Scenario{Mode: Throttle, RetryAfter: 5 * time.Second}},
		{"throttle:retry=1500ms", Scenario{Mode: Throttle, RetryAfter: 1500 * time.Millisecond}},
		{"hang:hold=2s", Scenario{Mode: Hang, Hold: 2 * time.Second}},
		{"slope:latency=100ms, step=50ms, failafter=40", Scenario{Mode: Slope, Latency: 100 * time.Millisecond, Step: 50 * time.Millisecond, FailAfter: 40}},
		{"ratelimit:rate=2.5,burst=10,status=503", Scenario{Mode: RateLimit, Rate: 2.5, Burst: 10, Status: 503}},
		{"truncated:cut=4096", Scenario{Mode: Truncated, Cut: 4096}},
		{"gone:status=410", Scenario{Mode: Gone, Status: 410}},
		{"restyled", Scenario{Mode: Restyled}},
		{"blocked", Scenario{Mode: Blocked}},
	}
	for _, tc := range cases {
		got, err := ParseScenario(tc.text)
		if err != nil || got != tc.want {
			t.Errorf("ParseScenario(%q) = %+v, %v; want %+v", tc.text, got, err, tc.want)
			continue
		}
		back, err := ParseScenario(got.String())
		if err != nil || back != got {
			t.Errorf("ParseScenario(%q.String() = %q) = %+v, %v; does not round-trip", tc.text, got.String(), back, err)
		}
	}
}

func TestParseScenarioRejectsBadText(t *testing.T) {
	for _, text := range []string{"", "sideways", "degrade:after", "degrade:after=-1", "degrade:after=x",
		"degrade:colour=red", "slope:step=5", "throttle:status=200", "ratelimit:rate=-1", "ratelimit:rate=NaN",
		"hang:hold=-1s"} {
		if sc, err := ParseScenario(text); !errors.Is(err, ErrInvalidScenario) {
			t.Errorf("ParseScenario(%q) = %+v, %v; want ErrInvalidScenario", text, sc, err)
		}
	}
}

func TestModeStringsRoundTrip(t *testing.T) {
	for m := Healthy; m <= Restyled; m++ {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if got := Mode(99).String(); got != "mode(99)" {
		t.Errorf("Mode(99).String() = %q", got)
	}
}
