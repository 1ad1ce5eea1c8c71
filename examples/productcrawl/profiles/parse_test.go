package profiles_test

import (
	"errors"
	"github.com/breakwater-crawl/breakwater/circuit"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// seed000 is seed 000's breaker_profiles block, as the seed prints it.
const seed000 = `breaker_profiles:
  conservative:            # small site, fragile origin, few URLs
    window_size: 10
    failure_threshold: 0.6
    cooldown_seconds: 300
    half_open_probes: 1

  standard:                # store.example.com product crawl
    window_size: 20
    failure_threshold: 0.5
    cooldown_seconds: 60
    half_open_probes: 2

  aggressive:              # high-volume crawl, many domains, cheap to re-run
    window_size: 50
    failure_threshold: 0.35
    cooldown_seconds: 30
    half_open_probes: 3
`

// full sets every field and uses every top-level key.
const full = `breaker_profiles:
  fragile:
    extends: conservative
    window_size: 12
    failure_threshold: 0.7
    cooldown_seconds: 240.5
    half_open_probes: 2
    consecutive_failures: 3
    slow_call_seconds: 4.5
    slow_call_rate: 0.75
    slope_multiple: 2.5
    slope_floor_ms: 150.5
    slope_trip: true
    max_cooldown_seconds: 1800
    timeout_multiple: 4
    timeout_floor_ms: 1000
    timeout_after: 25
default: standard
domains:
  shop.example.com: fragile
  .example.org: aggressive
  127.0.0.1:8080: conservative
`

func mustParse(t *testing.T, yaml string) *profiles.Set {
	t.Helper()
	set, err := profiles.Parse("profiles.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return set
}

func TestSeedFormatLoadsAsTheBuiltIns(t *testing.T) {
	set := mustParse(t, seed000)
	for _, want := range []circuit.Profile{breaker.Conservative(), breaker.Standard(), breaker.Aggressive()} {
		name := want.Name
		got, err := set.Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s from seed 000's block:\n got %+v\nwant %+v", name, got, want)
		}
	}
	if got := set.Names(); !reflect.DeepEqual(got, []string{"conservative", "standard", "aggressive"}) {
		t.Errorf("Names() = %v, want the file's order", got)
	}
	if got := set.Default(); !reflect.DeepEqual(got, breaker.Standard()) {
		t.Errorf("Default() without default: = %+v, want standard", got)
	}
	if len(set.Config().Domains) != 0 || len(set.Domains()) != 0 {
		t.Errorf("no domains: section, yet %d domains in the breaker's Config", len(set.Config().Domains))
	}
}

func TestEveryFieldIsRead(t *testing.T) {
	set := mustParse(t, full)
	got, err := set.Profile("fragile")
	if err != nil {
		t.Fatal(err)
	}
	want := breaker.Profile{Name: "fragile", WindowSize: 12, FailureThreshold: 0.7, Cooldown: 240*time.Second + 500*time.Millisecond,
		HalfOpenProbes: 2, ConsecutiveFailures: 3, SlowCall: 4500 * time.Millisecond, SlowCallRate: 0.75,
		SlopeMultiple: 2.5, SlopeFloor: 150*time.Millisecond + 500*time.Microsecond, SlopeTrip: true,
		MaxCooldown: 30 * time.Minute, TimeoutMultiple: 4, TimeoutFloor: time.Second, TimeoutAfter: 25}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fragile:\n got %+v\nwant %+v", got, want)
	}
	wantDomains := []profiles.Assignment{
		{Pattern: "shop.example.com", Profile: want, Line: 20},
		{Pattern: ".example.org", Profile: breaker.Aggressive(), Line: 21},
		{Pattern: "127.0.0.1:8080", Profile: breaker.Conservative(), Line: 22},
	}
	if d := set.Domains(); !reflect.DeepEqual(d, wantDomains) {
		t.Fatalf("Domains() =\n %+v\nwant\n %+v", d, wantDomains)
	}
	if set.File() != "profiles.yaml" {
		t.Errorf("File() = %q", set.File())
	}
}

func TestExtendsStartsFromTheNamedProfile(t *testing.T) {
	set := mustParse(t, `breaker_profiles:
  base:
    extends: aggressive
    cooldown_seconds: 90
  child:
    extends: base
    window_size: 30
  standard:
    extends: child
  conservative:
    half_open_probes: 2
  tweaked:
    extends: conservative
default: child
`)
	base := breaker.Aggressive()
	base.Name, base.Cooldown = "base", 90*time.Second
	child := base
	child.Name, child.WindowSize = "child", 30
	std := child
	std.Name = "standard"
	cons := breaker.Conservative()
	cons.HalfOpenProbes = 2
	tweaked := cons
	tweaked.Name = "tweaked"
	for name, want := range map[string]breaker.Profile{"base": base, "child": child, "standard": std, "conservative": cons, "tweaked": tweaked} {
		got, err := set.Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	if !reflect.DeepEqual(set.Default(), child) {
		t.Errorf("Default() = %+v, want child", set.Default())
	}
	if got, _ := set.Profile("aggressive"); !reflect.DeepEqual(got, breaker.Aggressive()) {
		t.Errorf("an undefined built-in is the built-in, got %+v", got)
	}
}

func TestABuiltInExtendingItselfIsTheBuiltIn(t *testing.T) {
	set := mustParse(t, "breaker_profiles:\n  standard:\n    extends: standard\n    cooldown_seconds: 30\n")
	want := breaker.Standard()
	want.Cooldown = 30 * time.Second
	if got, _ := set.Profile("standard"); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestANewProfileStartsFromNothing(t *testing.T) {
	set := mustParse(t, `breaker_profiles:
  strict:
    window_size: 5
    failure_threshold: 0.4
    cooldown_seconds: 0.25
    half_open_probes: 1
`)
	got, _ := set.Profile("strict")
	want := breaker.Profile{Name: "strict", WindowSize: 5, FailureThreshold: 0.4, Cooldown: 250 * time.Millisecond, HalfOpenProbes: 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v: a new profile has every optional rule off", got, want)
	}
}

func TestAliasesAreFollowed(t *testing.T) {
	set := mustParse(t, `breaker_profiles:
  a:
    extends: standard
    window_size: &w 40
  b:
    extends: standard
    window_size: *w
default: &d a
domains:
  x.example: *d
`)
	b, _ := set.Profile("b")
	if b.WindowSize != 40 || set.Default().Name != "a" || set.Domains()[0].Profile.Name != "a" {
		t.Fatalf("aliases not followed: b=%+v default=%s", b, set.Default().Name)
	}
}

func TestNilSetIsAnEmptyFile(t *testing.T) {
	var set *profiles.Set
	if !reflect.DeepEqual(set.Default(), breaker.Standard()) {
		t.Errorf("Default() = %+v", set.Default())
	}
	if p, err := set.Profile("aggressive"); err != nil || !reflect.DeepEqual(p, breaker.Aggressive()) {
		t.Errorf("Profile(aggressive) = %+v, %v", p, err)
	}
	if _, err := set.Profile("fragile"); !errors.Is(err, breaker.ErrInvalidProfile) {
		t.Errorf("Profile(fragile) on nil: %v, want ErrInvalidProfile", err)
	}
	if set.Config().Domains != nil || set.Domains() != nil || set.Names() != nil || set.File() != "" {
		t.Error("a nil Set has no options, domains or names")
	}
}

func TestUnknownProfileNameListsTheKnownOnes(t *testing.T) {
	set := mustParse(t, full)
	_, err := set.Profile("fragil")
	if !errors.Is(err, breaker.ErrInvalidProfile) {
		t.Fatalf("err = %v, want ErrInvalidProfile", err)
	}
	for _, want := range []string{`"fragil"`, "conservative, standard, aggressive", "defined in profiles.yaml: fragile"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
