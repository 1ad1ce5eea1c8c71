package breaker_test

import (
	"errors"
	"github.com/breakwater-crawl/breakwater/circuit"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

func TestProfilesHaveSeedNumbers(t *testing.T) {
	tests := []struct {
		p         breaker.Profile
		window    int
		threshold float64
		cooldown  time.Duration
		probes    int
	}{
		{breaker.Conservative(), 10, 0.6, 300 * time.Second, 1},
		{breaker.Standard(), 20, 0.5, 60 * time.Second, 2},
		{breaker.Aggressive(), 50, 0.35, 30 * time.Second, 3},
	}
	for _, tt := range tests {
		if tt.p.WindowSize != tt.window || tt.p.FailureThreshold != tt.threshold || tt.p.Cooldown != tt.cooldown || tt.p.HalfOpenProbes != tt.probes {
			t.Errorf("%s = %+v, want window %d threshold %v cooldown %v probes %d", tt.p.Name, tt.p, tt.window, tt.threshold, tt.cooldown, tt.probes)
		}
		if err := tt.p.Validate(); err != nil {
			t.Errorf("%s: %v", tt.p.Name, err)
		}
	}
}

func TestProfileValidateNamesTheField(t *testing.T) {
	tests := []struct {
		field string
		edit  func(*breaker.Profile)
	}{
		{"WindowSize", func(p *breaker.Profile) { p.WindowSize = 0 }},
		{"FailureThreshold", func(p *breaker.Profile) { p.FailureThreshold = 0 }},
		{"FailureThreshold", func(p *breaker.Profile) { p.FailureThreshold = 1.01 }},
		{"FailureThreshold", func(p *breaker.Profile) { p.FailureThreshold = math.NaN() }},
		{"ConsecutiveFailures", func(p *breaker.Profile) { p.ConsecutiveFailures = -1 }},
		{"Cooldown", func(p *breaker.Profile) { p.Cooldown = 0 }},
		{"HalfOpenProbes", func(p *breaker.Profile) { p.HalfOpenProbes = 0 }},
		{"SlowCall", func(p *breaker.Profile) { p.SlowCall = -time.Second }},
		{"SlowCallRate", func(p *breaker.Profile) { p.SlowCallRate = 1.5 }},
		{"SlowCallRate", func(p *breaker.Profile) { p.SlowCall, p.SlowCallRate = time.Second, 0 }},
		{"SlopeMultiple", func(p *breaker.Profile) { p.SlopeMultiple = 0.9 }},
		{"SlopeFloor", func(p *breaker.Profile) { p.SlopeFloor = -1 }},
		{"SlopeTrip", func(p *breaker.Profile) { p.SlopeMultiple, p.SlopeTrip = 0, true }},
		{"MaxCooldown", func(p *breaker.Profile) { p.MaxCooldown = time.Second }},
		{"TimeoutMultiple", func(p *breaker.Profile) { p.TimeoutMultiple = 0.5 }},
		{"TimeoutFloor", func(p *breaker.Profile) { p.TimeoutFloor = -1 }},
		{"TimeoutAfter", func(p *breaker.Profile) { p.TimeoutAfter = 0 }},
	}
	for _, tt := range tests {
		p := breaker.Standard()
		p.Name = "custom"
		tt.edit(&p)
		err := p.Validate()
		var pe *circuit.ProfileError
		if !errors.As(err, &pe) || pe.Field != tt.field || !errors.Is(err, breaker.ErrInvalidProfile) {
			t.Errorf("%s: err %v, want a *circuit.ProfileError naming %s", tt.field, err, tt.field)
			continue
		}
		if !strings.Contains(err.Error(), "custom") || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("message %q does not name the profile and field", err)
		}
		if _, err := breaker.New(breaker.Config{Profile: p}); !errors.Is(err, breaker.ErrInvalidProfile) {
			t.Errorf("New accepted a profile with a bad %s: %v", tt.field, err)
		}
	}
	p := breaker.Standard()
	p.FailureThreshold = 1
	if err := p.Validate(); err != nil {
		t.Errorf("threshold 1 (trip only on all failures) rejected: %v", err)
	}
}

func TestDomainProfileOverrides(t *testing.T) {
	fragile := breaker.Conservative()
	fragile.Name = "fragile"
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Domains: map[string]breaker.Profile{
		".example.com":           breaker.Aggressive(),
		".shop.example.com":      fragile,
		"Exact.Example.com:8080": breaker.Conservative(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{
		"example.com":            "aggressive",
		"www.example.com":        "aggressive",
		"a.shop.example.com":     "fragile",
		"exact.example.com:8080": "conservative",
		"exact.example.com:9090": "aggressive",
		"other.org":              "standard",
		"notexample.com":         "standard",
	} {
		if _, err := b.Allow(host); err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, s := range b.Stats() {
			if s.Domain == breaker.HostOf(host) {
				got = s.Profile
			}
		}
		if got != want {
			t.Errorf("%s uses profile %q, want %q", host, got, want)
		}
	}
	bad := breaker.Standard()
	bad.WindowSize = 0
	if _, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Domains: map[string]breaker.Profile{".x.org": bad}}); !errors.Is(err, breaker.ErrInvalidProfile) || !strings.Contains(err.Error(), ".x.org") {
		t.Errorf("bad override: err %v, want ErrInvalidProfile naming the pattern", err)
	}
	if _, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Domains: map[string]breaker.Profile{"  ": breaker.Standard()}}); err == nil {
		t.Error("empty pattern accepted")
	}
}

// A zero Config.Profile is Standard(): New(Config{}) is a working breaker.
func TestZeroProfileIsStandard(t *testing.T) {
	b, err := breaker.New(breaker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Allow("shop.example"); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); len(st) != 1 || st[0].Profile != breaker.Standard().Name {
		t.Errorf("stats %+v, want one domain with the standard profile", st)
	}
}
