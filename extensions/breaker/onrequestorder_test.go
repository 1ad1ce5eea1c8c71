package breaker_test

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	breakwater "github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// In plain Colly a request reaches OnError only after its OnRequest
// callbacks ran. A program that wires Breakwater in first and then adds
// its own OnRequest, putting a value in the request's Ctx, and its own
// OnError, reading it, sees that value in every OnError: for the requests
// refused while the circuit is open too, synchronous or not, on the
// collector or on a clone whose callbacks are its own. Each refusal is
// still counted refused (not as a failure) and kept parked by the
// checkpoint.
func TestOnErrorFollowsTheProgramsOnRequest(t *testing.T) {
	const urls = 20
	p := breaker.Standard()
	p.ConsecutiveFailures = 3
	for _, async := range []bool{false, true} {
		for _, clone := range []bool{false, true} {
			t.Run(fmt.Sprintf("async=%v/clone=%v", async, clone), func(t *testing.T) {
				store := startStore(t, testserver.Config{Products: urls, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
				b := newBreaker(t, breaker.Config{Profile: p})
				cp := boltCheckpoint(t)
				c := colly.NewCollector(colly.Async(async))
				if err := breakwater.Use(c, b, cp); err != nil {
					t.Fatal(err)
				}
				crawler := c
				if clone {
					crawler = c.Clone()
					if err := breakwater.Use(crawler, b, cp); err != nil {
						t.Fatal(err)
					}
				}

				var mu sync.Mutex
				counted := map[*colly.Request]bool{}
				var errs, refused int
				var early []string
				crawler.OnRequest(func(r *colly.Request) {
					r.Ctx.Put("attempt", 1)
					mu.Lock()
					counted[r] = true
					mu.Unlock()
				})
				crawler.OnError(func(r *colly.Response, err error) {
					n, _ := r.Ctx.GetAny("attempt").(int)
					mu.Lock()
					defer mu.Unlock()
					errs++
					if errors.Is(err, breaker.ErrOpen) {
						refused++
					}
					if n != 1 || !counted[r.Request] {
						early = append(early, fmt.Sprintf("%s (%v)", r.Request.URL, err))
					}
				})
				for i := 1; i <= urls; i++ {
					crawler.Visit(store.ProductURL(i)) // a synchronous Visit returns what OnError saw
				}
				crawler.Wait()

				if len(early) > 0 {
					t.Errorf("%d of %d OnError calls came before the program's OnRequest ran for the request, e.g. %s", len(early), errs, early[0])
				}
				if errs != urls || refused == 0 {
					t.Fatalf("%d OnError calls, %d of them refusals; want %d, some refused", errs, refused, urls)
				}
				st0 := b.Stats()[0]
				if st0.Refused != int64(refused) || st0.Outcomes[circuit.Degraded.String()] != int64(urls-refused) {
					t.Errorf("stats %+v: want %d refused and %d degraded", st0, refused, urls-refused)
				}
				if u := b.Unfinished(); u.Total != urls {
					t.Errorf("%d URLs listed unfinished, want %d", u.Total, urls)
				}
				if err := cp.Flush(); err != nil {
					t.Fatal(err)
				}
				counts, err := cp.Counts()
				if err != nil {
					t.Fatal(err)
				}
				if counts[storage.Parked] != refused {
					t.Errorf("checkpoint counts %v: want %d parked", counts, refused)
				}
			})
		}
	}
}

// A program whose own OnRequest comes before Breakwater's (registered
// before Use) keeps the early refusal: with only Breakwater's callbacks
// after the breaker's (the checkpoint's), a request to the open domain is
// refused in OnRequest and takes no LimitRule slot, nor its Delay.
func TestARefusalStaysEarlyWhenOnlyBreakwatersCallbacksFollow(t *testing.T) {
	const urls = 20
	p := breaker.Standard()
	p.ConsecutiveFailures = 3
	store := startStore(t, testserver.Config{Products: urls, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
	b := newBreaker(t, breaker.Config{Profile: p})
	cp := boltCheckpoint(t)
	c := colly.NewCollector()
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Delay: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	counted := map[*colly.Request]bool{}
	c.OnRequest(func(r *colly.Request) { counted[r] = true })
	if err := breakwater.Use(c, b, cp); err != nil {
		t.Fatal(err)
	}
	var slots, refused int
	c.OnRequestHeaders(func(*colly.Request) { slots++ }) // inside the rule's slot
	c.OnError(func(r *colly.Response, err error) {
		if !counted[r.Request] {
			t.Errorf("OnError for %s before the program's OnRequest", r.Request.URL)
		}
		if errors.Is(err, breaker.ErrOpen) {
			refused++
		}
	})
	for i := 1; i <= urls; i++ {
		c.Visit(store.ProductURL(i))
	}
	if slots != 3 || refused != urls-3 {
		t.Errorf("%d requests took the LimitRule's slot and %d were refused; want 3 (those that failed) and %d, refused in OnRequest", slots, refused, urls-3)
	}
}

// noNetwork answers every request with an error, without a network: a
// plain collector's refusal for the benchmark's baseline.
type noNetwork struct{}

func (noNetwork) RoundTrip(*http.Request) (*http.Response, error) { return nil, errNoNetwork }

var errNoNetwork = errors.New("no network")

// BenchmarkRefusalThroughColly is one Visit of a URL whose circuit is
// open, synchronous, through Colly's whole fetch to the program's
// OnError: refused in OnRequest when the program's OnRequest was
// registered before Use (early), at the gate when after it (gate: through
// the rest of the OnRequest callbacks and Colly's backend), and at the
// gate behind a LimitRule (its slot taken and given back; a rule's Delay
// is slept on top, as for any request). colly is a plain collector whose
// transport fails at once, for scale.
//
//	go test -run '^$' -bench RefusalThroughColly -benchmem ./extensions/breaker/
func BenchmarkRefusalThroughColly(b *testing.B) {
	const u = "http://down.test/products/sku-1"
	for _, tc := range []struct {
		name        string
		breaker     bool
		programLast bool
		rule        *colly.LimitRule
	}{
		{name: "colly"},
		{name: "early", breaker: true},
		{name: "gate", breaker: true, programLast: true},
		{name: "gate+LimitRule", breaker: true, programLast: true, rule: &colly.LimitRule{DomainGlob: "*", Parallelism: 2}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := colly.NewCollector(colly.AllowURLRevisit())
			c.WithTransport(noNetwork{})
			if tc.rule != nil {
				if err := c.Limit(tc.rule); err != nil {
					b.Fatal(err)
				}
			}
			var errs, refused int
			program := func() {
				c.OnRequest(func(r *colly.Request) { r.Ctx.Put("attempt", 1) })
				c.OnError(func(r *colly.Response, err error) {
					errs++
					if errors.Is(err, breaker.ErrOpen) {
						refused++
					}
				})
			}
			if !tc.programLast {
				program()
			}
			if tc.breaker {
				p := breaker.Standard()
				p.ConsecutiveFailures, p.Cooldown, p.MaxCooldown = 1, time.Hour, time.Hour
				br, err := breaker.New(breaker.Config{Profile: p})
				if err != nil {
					b.Fatal(err)
				}
				t, _ := br.Allow("down.test")
				br.Record(t, circuit.Result{Class: circuit.Degraded})
				if err := breakwater.Use(c, br); err != nil {
					b.Fatal(err)
				}
			}
			if tc.programLast {
				program()
			}
			b.ReportAllocs()
			for b.Loop() {
				c.Visit(u)
			}
			if errs != b.N || (tc.breaker && refused != b.N) {
				b.Fatalf("%d visits, %d OnError calls, %d of them refusals", b.N, errs, refused)
			}
		})
	}
}

// With Config.Proxies paused (every proxy failing), a request whose
// program's OnRequest follows the breaker's is refused at the gate, after
// it: kept unfinished, not sent to fail for want of a proxy.
func TestAPausedProxyPoolRefusesAfterTheProgramsOnRequest(t *testing.T) {
	const products = 20
	store := startStore(t, testserver.Config{Products: products})
	refuse := testserver.ProxyConfig{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyRefuse}}
	_, pool := startPool(t, refuse, refuse, refuse, refuse)
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Proxies: pool})
	c := colly.NewCollector(colly.Async(true))
	c.SetProxyFunc(pool.ProxyFunc())
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	b.Register(c)
	var mu sync.Mutex
	counted := map[*colly.Request]bool{}
	var early []string
	var refused, sentToFail int
	c.OnRequest(func(r *colly.Request) {
		mu.Lock()
		counted[r] = true
		mu.Unlock()
	})
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		if !counted[r.Request] {
			early = append(early, r.Request.URL.String())
		}
		switch {
		case errors.Is(err, breaker.ErrOpen):
			refused++
		case errors.Is(err, proxy.ErrAllEjected):
			sentToFail++
		}
	})
	for n := 1; n <= products; n++ {
		c.Visit(store.ProductURL(n))
	}
	c.Wait()
	if len(early) > 0 {
		t.Errorf("%d OnError calls before the program's OnRequest, e.g. %s", len(early), early[0])
	}
	if sentToFail > 4 || refused == 0 {
		t.Errorf("%d URLs refused, %d sent to fail for want of a proxy; want some refused and at most the 4 in flight sent", refused, sentToFail)
	}
	if u := b.Unfinished(); u.Total != products {
		t.Errorf("%d URLs unfinished, want all %d", u.Total, products)
	}
}

// boltCheckpoint is a checkpoint on a bolt file of the test's own, closed
// (checkpoint, then file) when the test ends.
func boltCheckpoint(t *testing.T) *checkpoint.Checkpoint {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cp, err := checkpoint.New(st, checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	return cp
}
