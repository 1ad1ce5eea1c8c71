package profiles_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
)

func TestPacingGivesDomainsTheirLeastGap(t *testing.T) {
	set, err := profiles.Parse("p.yaml", []byte(`pacing:
  Shop.Example.com: {min_gap_ms: 500}
  .example.org:
    min_gap_seconds: 2
  www.example.org: {min_gap_seconds: 0.25}
  127.0.0.1:8080: {min_gap_ms: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]time.Duration{
		"shop.example.com": 500 * time.Millisecond, "example.org": 2 * time.Second, "a.b.example.org:8443": 2 * time.Second,
		"www.example.org": 250 * time.Millisecond, "127.0.0.1:8080": 10 * time.Millisecond,
	} {
		if got, ok := set.MinGap(host); !ok || got != want {
			t.Errorf("MinGap(%q) = %v, %v; want %v", host, got, ok, want)
		}
	}
	for _, host := range []string{"other.example", "notexample.org", "127.0.0.1:9090", "shop.example.com:8080"} {
		if got, ok := set.MinGap(host); ok {
			t.Errorf("MinGap(%q) = %v: want none", host, got)
		}
	}
	if ps := set.Pacing(); len(ps) != 4 || ps[0].Pattern != "shop.example.com" || ps[0].Line != 2 {
		t.Errorf("Pacing() = %+v: want the four entries in order, lower-cased, with their lines", ps)
	}
	var none *profiles.Set
	if _, ok := none.MinGap("x"); ok || none.Pacing() != nil {
		t.Error("a nil set gives a gap")
	}
}

func TestPacingMistakesNameLineAndField(t *testing.T) {
	for name, c := range map[string]struct {
		yaml, want string
		line       int
	}{
		"unknown field":  {"pacing:\n  a.example: {min_gap: 5}\n", "pacing.a.example.min_gap: unknown field", 2},
		"a duration":     {"pacing:\n  a.example:\n    min_gap_seconds: 5s\n", "not a duration: write 5", 3},
		"negative":       {"pacing:\n  a.example:\n    min_gap_ms: -1\n", "must be 0 or more", 3},
		"twice":          {"pacing:\n  a.example:\n    min_gap_ms: 1\n    min_gap_seconds: 1\n", "given twice", 4},
		"a URL":          {"pacing:\n  https://a.example/: {min_gap_ms: 1}\n", "a host, not a URL", 2},
		"no setting":     {"pacing:\n  a.example: {}\n", "no setting", 2},
		"same pattern":   {"pacing:\n  a.example: {min_gap_ms: 1}\n  A.example: {min_gap_ms: 2}\n", "same pattern as line 2", 3},
		"misspelt block": {"pacng:\n  a.example: {min_gap_ms: 1}\n", "unknown field", 1},
	} {
		_, err := profiles.Parse("p.yaml", []byte(c.yaml))
		var pe *profiles.Error
		if !errors.As(err, &pe) || !errors.Is(err, profiles.ErrInvalid) || pe.Line != c.line || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v: want line %d saying %q", name, err, c.line, c.want)
		}
	}
}
