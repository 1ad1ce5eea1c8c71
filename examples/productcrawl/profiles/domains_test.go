package profiles_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

func TestDomainPatternsAccepted(t *testing.T) {
	for _, pattern := range []string{
		"shop.example.com", "SHOP.Example.com", ".example.org", "127.0.0.1:8080", "localhost", "[::1]:8443", "[::1]",
		"under_score.example", "xn--bcher-kva.example", "a-b.c-d.example:1",
	} {
		t.Run(pattern, func(t *testing.T) {
			if _, err := profiles.Parse("profiles.yaml", []byte("domains:\n  \""+pattern+"\": aggressive\n")); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// The assignments reach a real breaker: each host's circuit gets the
// profile its most specific pattern names, the rest the default.
func TestConfigAssignsProfilesInTheBreaker(t *testing.T) {
	set := mustParse(t, `breaker_profiles:
  fragile:
    extends: conservative
    cooldown_seconds: 600
    max_cooldown_seconds: 3600
default: aggressive
domains:
  Shop.Example.com: fragile
  .example.com: standard
  127.0.0.1:8080: conservative
`)
	b, err := breaker.New(set.Config())
	if err != nil {
		t.Fatalf("breaker.New: %v", err)
	}
	want := map[string]string{
		"shop.example.com": "fragile",      // exact beats suffix, case ignored
		"www.example.com":  "standard",     // suffix
		"example.com":      "standard",     // the suffix covers the domain itself
		"example.com:8443": "standard",     // suffixes match any port
		"127.0.0.1:8080":   "conservative", // exact host:port
		"127.0.0.1:9090":   "aggressive",   // another port is another host
		"notexample.com":   "aggressive",   // a suffix matches at a dot only
	}
	for host := range want {
		if _, err := b.Allow(host); err != nil {
			t.Fatalf("Allow(%s): %v", host, err)
		}
	}
	for _, st := range b.Stats() {
		if st.Profile != want[st.Domain] {
			t.Errorf("%s uses profile %q, want %q", st.Domain, st.Profile, want[st.Domain])
		}
	}
	if got := len(b.Stats()); got != len(want) {
		t.Fatalf("%d domains in the breaker, want %d", got, len(want))
	}
}
