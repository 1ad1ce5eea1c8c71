package breaker

import (
	"fmt"
	"strings"
	"testing"
)

// TestUnfinishedListIsBoundedAndCounted lists more unfinished URLs than
// the sample holds: the list stays at the sample, every URL is counted
// per domain, and the run's judgement names every domain with its count.
func TestUnfinishedListIsBoundedAndCounted(t *testing.T) {
	b, err := New(withUnfinishedSample(Config{Profile: Standard()}, 1000))
	if err != nil {
		t.Fatal(err)
	}
	const doms, per = 50, 500 // 25,000 URLs
	for d := range doms {
		for i := range per {
			host := fmt.Sprintf("shop-%d.test", d)
			b.unfinished.mark(Unfinished{URL: fmt.Sprintf("http://%s/p/%d", host, i), Domain: host, Reason: "refused"})
		}
	}
	s := b.Unfinished()
	if len(s.URLs) != 1000 {
		t.Fatalf("listed %d URLs, want the sample of 1000", len(s.URLs))
	}
	if s.Total != doms*per || s.Truncated != doms*per-1000 {
		t.Fatalf("total %d, truncated %d: want total %d, truncated %d", s.Total, s.Truncated, doms*per, doms*per-1000)
	}
	for d := range doms {
		if n := s.PerDomain[fmt.Sprintf("shop-%d.test", d)]; n != per {
			t.Fatalf("shop-%d.test counted %d, want %d", d, n, per)
		}
	}
	ev := b.Judge()
	var found bool
	for _, f := range ev.Findings {
		if f.Kind == "unfinished" {
			found = len(f.Domains) == doms && strings.Contains(f.Reason, fmt.Sprintf("shop-7.test: %d", per))
		}
	}
	if !found {
		t.Fatalf("Judge does not name every domain with its count: %+v", ev.Findings)
	}
}
