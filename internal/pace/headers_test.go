package pace

import (
	"net/http"
	"testing"
	"time"
)

func TestParseQuotaReadsEveryDialect(t *testing.T) {
	h := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		want Quota
		ok   bool
	}{
		{"IETF draft pair", h("RateLimit-Limit", "10", "RateLimit-Remaining", "4", "RateLimit-Reset", "2"), Quota{4, 2 * time.Second}, true},
		{"draft pair with a policy", h("RateLimit-Remaining", "4, 100;w=60", "RateLimit-Reset", "2"), Quota{4, 2 * time.Second}, true},
		{"X- pair in seconds", h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1.5"), Quota{0, 1500 * time.Millisecond}, true},
		{"X- pair as a Unix time", h("X-RateLimit-Remaining", "99", "X-RateLimit-Reset", "1795003230"), Quota{99, 30 * time.Second}, true},
		{"single field", h("RateLimit", "limit=10, remaining=0, reset=3"), Quota{0, 3 * time.Second}, true},
		{"single field, later draft", h("RateLimit", `"default";r=50;t=30`), Quota{50, 30 * time.Second}, true},
		{"no reset", h("X-RateLimit-Remaining", "3"), Quota{}, false},
		{"garbage", h("RateLimit-Remaining", "many", "RateLimit-Reset", "soon"), Quota{}, false},
		{"reset past", h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1795003100"), Quota{}, false},
		{"none", h(), Quota{}, false},
	} {
		now := time.Unix(1795003200, 0)
		q, ok := ParseQuota(tc.h, now)
		if q != tc.want || ok != tc.ok {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, q, ok, tc.want, tc.ok)
		}
	}
}

func TestPaceSpreadsAnAdvertisedQuota(t *testing.T) {
	p := newTestPace(t, Config{Parallelism: 2, MinGap: 10 * time.Millisecond}, nil)
	p.Advertised(t0, Quota{Remaining: 4, Reset: 2 * time.Second})
	if g := p.gapLocked(t0.Add(time.Second)); g != 500*time.Millisecond {
		t.Fatalf("gap within the window %v, want 2s ÷ 4 = 500ms", g)
	}
	if g := p.gapLocked(t0.Add(2 * time.Second)); g != 10*time.Millisecond {
		t.Fatalf("gap after the reset %v, want the user's 10ms", g)
	}
	p.Advertised(t0, Quota{Remaining: 0, Reset: 30 * time.Second})
	if s := p.Stats(t0); !s.HaltUntil.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("halt until %v with the quota spent, want its reset t0+30s", s.HaltUntil)
	}
}

// An answer without rate-limit headers (most of them) is read without an
// allocation: ParseQuota runs for every response.
func TestParseQuotaWithoutQuotaAllocatesNothing(t *testing.T) {
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Content-Length": {"38000"}}
	now := time.Unix(1795003200, 0)
	if n := testing.AllocsPerRun(100, func() { ParseQuota(h, now) }); n != 0 {
		t.Fatalf("%v allocations for an answer without a quota, want 0", n)
	}
}

func BenchmarkParseQuota(b *testing.B) {
	now := time.Unix(1795003200, 0)
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"none", http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Content-Length": {"38000"}}},
		{"x-pair", http.Header{"X-Ratelimit-Remaining": {"99"}, "X-Ratelimit-Reset": {"1795003230"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ParseQuota(tc.h, now)
			}
		})
	}
}
