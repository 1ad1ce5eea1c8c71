package breaker_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/gocolly/colly/v2"
)

// A site's rate-limit headers saying its quota is spent halt the domain
// until the quota's reset: after a 200 (no request before the reset), and
// after a 429 without Retry-After (a pause of the reset's 30 s, not the
// default 1 s).
func TestSpentQuotaHaltsTheDomainUntilItsReset(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			clk := clocktest.NewFake(epoch)
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if hits.Add(1) == 1 {
					w.Header().Set("X-RateLimit-Remaining", "0")
					w.Header().Set("X-RateLimit-Reset", fmt.Sprint(clk.Now().Add(30*time.Second).Unix()))
					if status != http.StatusOK {
						w.WriteHeader(status)
						return
					}
				}
				fmt.Fprint(w, "<html><body><h1>page</h1></body></html>")
			}))
			defer srv.Close()
			b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk, Pacing: breaker.Pacing{Parallelism: 1}})
			c := colly.NewCollector(colly.Async(true))
			b.Register(c)
			var saved atomic.Int32
			c.OnScraped(func(*colly.Response) { saved.Add(1) })
			for i := 1; i <= 3; i++ {
				c.Visit(fmt.Sprintf("%s/p/%d", srv.URL, i))
			}
			// Time stands still: nothing leaves before the reset.
			if !clk.BlockUntil(1, 5*time.Second) {
				t.Fatal("no request waits for the reset")
			}
			time.Sleep(50 * time.Millisecond)
			if n := hits.Load(); n != 1 {
				t.Fatalf("%d requests before the quota's reset, want 1", n)
			}
			if h := b.Stats()[0].Pace.HaltUntil; !h.Equal(epoch.Add(30 * time.Second).Truncate(time.Second)) {
				t.Fatalf("halted until %v, want the reset at %v", h, epoch.Add(30*time.Second))
			}
			stop := make(chan struct{})
			go clk.Drive(stop)
			c.Wait()
			close(stop)
			if n := saved.Load(); n != 3 {
				t.Fatalf("%d of 3 pages saved", n)
			}
			if status != http.StatusOK {
				if p := b.Stats()[0].Pace; p.Pauses != 1 || p.PausedFor != 30*time.Second {
					t.Fatalf("pace %+v: want one pause of the reset's 30 s", p)
				}
			}
		})
	}
}
