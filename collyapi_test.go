package breakwater_test

// Colly's API, row by row: each option or method of
// *colly.Collector that changes how a request flows, crawled with
// Breakwater wired exactly as the README's Usage, against the five
// promises: (a) at most need + P − 1 requests into a failing store,
// (b) Wait() returns, (c) no URL lost silently, (d) no page fetched twice
// that the user did not ask twice for, (e) the ending is true. The table is
// docs/colly-features.md. Clone, CacheDir, LimitRule delays,
// AllowURLRevisit, refusals behind a shared delayed rule, redirects across
// hosts, MaxRequests and a synchronous collector's refusals in OnError are
// tested in extensions/breaker/collyfeatures_test.go.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/proxy"
	"github.com/gocolly/colly/v2/queue"
)

func TestCollyAsyncAndSync(t *testing.T) {
	for _, f := range []feature{
		{name: "sync"},
		{name: "async", async: true},
	} {
		t.Run(f.name, func(t *testing.T) { crawlFeature(t, f) })
	}
}

func TestCollyLimitRules(t *testing.T) {
	limit := func(rules ...*colly.LimitRule) func(*testing.T, *colly.Collector, *testserver.Store) {
		return func(t *testing.T, c *colly.Collector, _ *testserver.Store) {
			if err := c.Limits(rules); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range []feature{
		{name: "Limit/DomainGlob=*", async: true, p: 4, setup: func(t *testing.T, c *colly.Collector, _ *testserver.Store) {
			if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "Limits/DomainGlob=host,*", async: true, p: 3, setup: func(t *testing.T, c *colly.Collector, s *testserver.Store) {
			limit(&colly.LimitRule{DomainGlob: s.Host(), Parallelism: 3}, &colly.LimitRule{DomainGlob: "*", Parallelism: 1})(t, c, s)
		}},
		{name: "Limit/DomainRegexp", async: true, p: 2, setup: func(t *testing.T, c *colly.Collector, s *testserver.Store) {
			limit(&colly.LimitRule{DomainRegexp: `^127\.0\.0\.1:\d+$`, Parallelism: 2})(t, c, s)
		}},
		{name: "Limit/Parallelism=1", async: true, p: 1, setup: func(t *testing.T, c *colly.Collector, s *testserver.Store) {
			limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1})(t, c, s)
		}},
	} {
		t.Run(f.name, func(t *testing.T) { crawlFeature(t, f) })
	}
}

// TestCollyLimitsTwoSitesOneFailing: one rule per site; one fails, the
// other is crawled whole, and the ending names the trip.
func TestCollyLimitsTwoSitesOneFailing(t *testing.T) {
	bad := degradingStore(t)
	good := healthyStore(t)
	c := colly.NewCollector(colly.Async(true))
	if err := c.Limits([]*colly.LimitRule{
		{DomainGlob: bad.Host(), Parallelism: 2},
		{DomainRegexp: regexp.QuoteMeta(good.Host()), Parallelism: 3},
	}); err != nil {
		t.Fatal(err)
	}
	k := wireUsage(t, c, usageOpts{retry: true})
	o := k.run(func() {
		c.Visit(bad.URL() + "/")
		c.Visit(good.URL() + "/")
	})
	wantEnding(t, o, outcome.Tripped)
	wantBound(t, bad, 2)
	wantProducts(t, k, append(productURLs(good.URL(), upTo(good.Catalog().Len())...), collectedOf(k, bad)...))
	for _, s := range []*testserver.Store{bad, good} {
		hits := s.Requests()
		wantNoDoubles(t, hits, nil)
		wantNoneLost(t, k, s.URL(), hits, o, nil)
	}
}

// collectedOf lists the URLs of s that got a record: the failing store's
// share of the total, so the healthy one's can be checked exactly.
func collectedOf(k *usageCrawl, s *testserver.Store) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var us []string
	for u := range k.records {
		if strings.HasPrefix(u, s.URL()+"/") {
			us = append(us, u)
		}
	}
	return us
}

// TestCollyMaxDepth: listing 1 is depth 1, its products and listing 2
// depth 2; with MaxDepth 2 nothing deeper is fetched, and what the user's
// depth left out is not work left undone.
func TestCollyMaxDepth(t *testing.T) {
	crawlFeature(t, feature{name: "MaxDepth=2", async: true,
		// 40 products a listing page, so depth 2 reaches into the degradation
		stores: func(degrade bool) testserver.Config {
			if degrade {
				return testserver.Config{Products: 150, PerPage: 40, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 10}}
			}
			return testserver.Config{Products: 60, PerPage: 20}
		},
		setup: func(_ *testing.T, c *colly.Collector, _ *testserver.Store) { c.MaxDepth = 2 },
		want: func(cat testserver.Catalog) []int {
			// the products listing page 1 links to
			return upTo(min(cat.Len(), len(productLinks(cat.ListingPage(1)))))
		},
	})
}

var productLinkRE = regexp.MustCompile(`class="product-link" href="([^"]+)"`)

func productLinks(page []byte) []string {
	var ps []string
	for _, m := range productLinkRE.FindAllSubmatch(page, -1) {
		ps = append(ps, string(m[1]))
	}
	return ps
}

func skuOf(rawURL string) int {
	i := strings.LastIndex(rawURL, "sku-")
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(rawURL[i+4:])
	return n
}

func TestCollyURLFilters(t *testing.T) {
	even := func(cat testserver.Catalog) []int {
		var ns []int
		for n := 1; n <= cat.Len(); n++ {
			if n%2 == 0 && n%10 != 0 {
				ns = append(ns, n)
			}
		}
		return ns
	}
	crawlFeature(t, feature{name: "URLFilters+DisallowedURLFilters", async: true,
		setup: func(_ *testing.T, c *colly.Collector, _ *testserver.Store) {
			c.URLFilters = []*regexp.Regexp{regexp.MustCompile(`/$|/list/\d+$|/products/sku-\d*[02468]$`)}
			c.DisallowedURLFilters = []*regexp.Regexp{regexp.MustCompile(`/products/sku-\d*0$`)}
		},
		want: even,
	})
}

// TestCollyDomainLists: domains are matched on the host name without its
// port, so the refused site is reached as "localhost" and the crawled one
// as 127.0.0.1. The refused one receives nothing; the ending is complete:
// the user chose not to crawl it.
func TestCollyDomainLists(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(c *colly.Collector)
	}{
		{"AllowedDomains", func(c *colly.Collector) { c.AllowedDomains = []string{"127.0.0.1"} }},
		{"DisallowedDomains", func(c *colly.Collector) { c.DisallowedDomains = []string{"localhost"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crawled, refused := healthyStore(t), healthyStore(t)
			c := colly.NewCollector(colly.Async(true))
			tc.setup(c)
			k := wireUsage(t, c, usageOpts{retry: true})
			var verr error
			o := k.run(func() {
				c.Visit(crawled.URL() + "/")
				verr = c.Visit(strings.Replace(refused.URL(), "127.0.0.1", "localhost", 1) + "/")
			})
			if !errors.Is(verr, colly.ErrForbiddenDomain) {
				t.Errorf("Visit of the refused domain returned %v, want ErrForbiddenDomain", verr)
			}
			if n := refused.Count(); n != 0 {
				t.Errorf("the refused domain received %d requests", n)
			}
			wantEnding(t, o, outcome.Complete)
			wantProducts(t, k, productURLs(crawled.URL(), upTo(crawled.Catalog().Len())...))
			hits := crawled.Requests()
			wantNoDoubles(t, hits, nil)
			wantNoneLost(t, k, crawled.URL(), hits, o, nil)
		})
	}
}

// TestCollyRobotsTxt: obeying robots.txt, Colly fetches it once per host
// outside every callback and LimitRule (the store 404s it: allow all).
func TestCollyRobotsTxt(t *testing.T) {
	obey := func(_ *testing.T, c *colly.Collector, _ *testserver.Store) { c.IgnoreRobotsTxt = false }
	t.Run("404", func(t *testing.T) {
		crawlFeature(t, feature{name: "IgnoreRobotsTxt=false", async: true, setup: obey})
	})
	// A store failing from its first answer fails robots.txt too. The
	// robots parser reads a 5xx as "disallow all", but Colly v2.3.0 asks it
	// FindGroup(UserAgent), which for that answer is an empty group that
	// allows everything: the crawl goes on, and the breaker judges the pages.
	t.Run("503", func(t *testing.T) {
		s := startStore(t, testserver.Config{Products: 30, PerPage: 10, Scenario: testserver.Scenario{Mode: testserver.Degrade}})
		c := colly.NewCollector(colly.Async(true))
		c.IgnoreRobotsTxt = false
		k := wireUsage(t, c, usageOpts{retry: true})
		var verr error
		o := k.run(func() { verr = c.Visit(s.URL() + "/") })
		t.Logf("Visit: %v; ending %s (exit %d, %q); store hits %d; unfinished %d", verr, o.State, o.State.ExitCode(), o.Reason, s.Count(), k.b.Unfinished().Total)
		wantEnding(t, o, outcome.Tripped)
		if verr != nil {
			t.Errorf("Visit: %v, want nil (Colly lets a 5xx robots.txt through)", verr)
		}
		if n := s.CountPath("/robots.txt"); n != 1 {
			t.Errorf("robots.txt fetched %d times, want 1", n)
		}
		wantBound(t, s, collyNeed())
		wantNoDoubles(t, s.Requests(), nil)
		wantNoneLost(t, k, s.URL(), s.Requests(), o, nil)
	})
}

func TestCollyParseHTTPErrorResponse(t *testing.T) {
	crawlFeature(t, feature{name: "ParseHTTPErrorResponse", async: true, p: 4,
		setup: func(t *testing.T, c *colly.Collector, _ *testserver.Store) {
			c.ParseHTTPErrorResponse = true
			if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
				t.Fatal(err)
			}
		}})
}

// TestCollyMaxBodySize: a cap above the pages changes nothing; a cap below
// the product pages (about 38 KB) cuts every one, Colly says nothing, and
// the ending must not be complete.
func TestCollyMaxBodySize(t *testing.T) {
	t.Run("above the pages", func(t *testing.T) {
		crawlFeature(t, feature{name: "MaxBodySize=1MiB", async: true,
			setup: func(_ *testing.T, c *colly.Collector, _ *testserver.Store) { c.MaxBodySize = 1 << 20 }})
	})
	t.Run("below the product pages", func(t *testing.T) {
		s := healthyStore(t)
		c := colly.NewCollector(colly.Async(true))
		c.MaxBodySize = 16 << 10
		k := wireUsage(t, c, usageOpts{retry: true, follow: followRequest})
		o := k.run(func() { c.Visit(s.URL() + "/") })
		t.Logf("ending %s (exit %d, %q); %d records; store hits %d; unfinished %d", o.State, o.State.ExitCode(), o.Reason, k.total(), s.Count(), k.b.Unfinished().Total)
		if o.State == outcome.Complete {
			t.Errorf("every product page cut at 16 KiB by MaxBodySize, and the ending is complete")
		}
		wantNoDoubles(t, s.Requests(), nil)
		wantNoneLost(t, k, s.URL(), s.Requests(), o, nil)
		if s.Count() > 3+s.Catalog().Len() {
			t.Errorf("%d requests for %d pages", s.Count(), 3+s.Catalog().Len())
		}
	})
}

// TestCollySetRequestTimeout: a store that stops answering is cut by the
// user's timeout, Wait returns, and the ending is tripped.
func TestCollySetRequestTimeout(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			s := startStore(t, testserver.Config{Products: 60, PerPage: 10,
				Scenario: testserver.Scenario{Mode: testserver.Hang, After: 15, Hold: 10 * time.Second}})
			c := colly.NewCollector(colly.Async(async))
			c.SetRequestTimeout(300 * time.Millisecond)
			k := wireUsage(t, c, usageOpts{retry: true})
			o := k.run(func() { c.Visit(s.URL() + "/") })
			t.Logf("Wait returned after %v", k.elapsed)
			wantEnding(t, o, outcome.Tripped)
			p := 1
			if async {
				p = collyNeed()
			}
			wantBound(t, s, p)
			hits := s.Requests()
			wantNoDoubles(t, hits, nil)
			wantNoneLost(t, k, s.URL(), hits, o, nil)
		})
	}
}

// TestCollySetRedirectHandler: product URLs that redirect on the same host
// (a front of the store's: /go/sku-N → 302 → /products/sku-N), followed by
// the user's redirect handler.
func TestCollySetRedirectHandler(t *testing.T) {
	for _, degrade := range []bool{false, true} {
		t.Run(map[bool]string{false: "healthy", true: "degrading"}[degrade], func(t *testing.T) {
			cfg := testserver.Config{Products: 30}
			n := 30
			if degrade {
				cfg = testserver.Config{Products: 80, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}}
				n = 80
			}
			s := startStore(t, cfg)
			var hops atomic.Int64
			srv := front(t, s, func(w http.ResponseWriter, r *http.Request) bool {
				if rest, ok := strings.CutPrefix(r.URL.Path, "/go/"); ok {
					hops.Add(1)
					http.Redirect(w, r, "/products/"+rest, http.StatusFound)
					return true
				}
				return false
			})
			c := colly.NewCollector(colly.Async(true))
			var followed atomic.Int64
			c.SetRedirectHandler(func(req *http.Request, via []*http.Request) error {
				followed.Add(1)
				if len(via) >= 5 {
					return http.ErrUseLastResponse
				}
				return nil
			})
			k := wireUsage(t, c, usageOpts{retry: true, follow: followNone})
			o := k.run(func() {
				for i := 1; i <= n; i++ {
					c.Visit(srv.URL + "/go/sku-" + strconv.Itoa(i))
				}
			})
			if followed.Load() == 0 {
				t.Errorf("the user's redirect handler was never called (%d redirects served)", hops.Load())
			}
			hits := s.Requests()
			alias := func(u string) string { return strings.Replace(u, "/go/", "/products/", 1) }
			if degrade {
				wantEnding(t, o, outcome.Tripped)
				wantBound(t, s, collyNeed())
			} else {
				wantEnding(t, o, outcome.Complete)
				wantProducts(t, k, productURLs(srv.URL, upTo(n)...))
			}
			wantNoDoubles(t, hits, nil)
			wantNoneLost(t, k, srv.URL, hits, o, alias)
		})
	}
}

// TestCollySetProxyFunc: every request goes through the user's proxy
// (colly/proxy's RoundRobinProxySwitcher over a loopback forward proxy),
// set before Use as the user's configuration, or after it.
func TestCollySetProxyFunc(t *testing.T) {
	for _, after := range []bool{false, true} {
		name := "before Use"
		if after {
			name = "after Use"
		}
		t.Run(name, func(t *testing.T) {
			px := startProxy(t)
			set := func(c *colly.Collector) {
				rp, err := proxy.RoundRobinProxySwitcher(px.srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				c.SetProxyFunc(rp)
			}
			f := feature{name: name, async: true, p: 4,
				setup: func(t *testing.T, c *colly.Collector, _ *testserver.Store) {
					if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
						t.Fatal(err)
					}
					if !after {
						set(c)
					}
				}}
			if after {
				f.user = set
			}
			crawlFeature(t, f)
			if px.n.Load() == 0 {
				t.Errorf("nothing went through the proxy")
			}
		})
	}
}

// TestCollyWithTransportAndSetClient: the user's transport, or whole
// client, set before Use, carries every request the store receives.
func TestCollyWithTransportAndSetClient(t *testing.T) {
	for _, name := range []string{"WithTransport", "SetClient"} {
		t.Run(name, func(t *testing.T) {
			var rts []*countingRT
			var stores []*testserver.Store
			f := feature{name: name, async: true, p: 4,
				setup: func(t *testing.T, c *colly.Collector, s *testserver.Store) {
					rt := &countingRT{base: &http.Transport{}}
					rts, stores = append(rts, rt), append(stores, s)
					if name == "WithTransport" {
						c.WithTransport(rt)
					} else {
						c.SetClient(&http.Client{Transport: rt, Timeout: 5 * time.Second})
					}
					if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
						t.Fatal(err)
					}
				}}
			crawlFeature(t, f)
			for i, rt := range rts {
				if int(rt.n.Load()) != stores[i].Count() {
					t.Errorf("the user's transport carried %d requests, the store received %d", rt.n.Load(), stores[i].Count())
				}
			}
		})
	}
}

// TestCollySetCookieJar: the store's front sets a session cookie on the
// first listing page; every later request carries it through the user's jar.
func TestCollySetCookieJar(t *testing.T) {
	s := degradingStore(t)
	var without atomic.Int64
	srv := front(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
		} else if ck, err := r.Cookie("session"); err != nil || ck.Value != "s1" {
			without.Add(1)
		}
		return false
	})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	c.SetCookieJar(jar)
	k := wireUsage(t, c, usageOpts{retry: true})
	o := k.run(func() { c.Visit(srv.URL + "/") })
	if n := without.Load(); n > 0 {
		t.Errorf("%d requests came without the session cookie", n)
	}
	wantEnding(t, o, outcome.Tripped)
	wantBound(t, s, collyNeed())
	hits := s.Requests()
	wantNoDoubles(t, hits, nil)
	wantNoneLost(t, k, srv.URL, hits, o, nil)
}

// TestCollyStdlibContext: the user cancels the crawl's context after ten
// records; the run ends tripped with what was left listed, never complete.
func TestCollyStdlibContext(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			s := startStore(t, testserver.Config{Products: 60, PerPage: 10, Scenario: testserver.Scenario{Latency: 5 * time.Millisecond}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := colly.NewCollector(colly.Async(async), colly.StdlibContext(ctx))
			k := wireUsage(t, c, usageOpts{retry: true})
			c.OnScraped(func(*colly.Response) {
				if k.total() >= 10 {
					cancel()
				}
			})
			o := k.run(func() { c.Visit(s.URL() + "/") })
			un := k.b.Unfinished()
			t.Logf("%d records, %d store hits, %d unfinished, ending %s (%q)", k.total(), s.Count(), un.Total, o.State, o.Reason)
			if k.total() >= int64(s.Catalog().Len()) {
				t.Fatalf("the whole store was collected before the cancel: nothing tested")
			}
			wantEnding(t, o, outcome.Tripped)
			if un.Total == 0 {
				t.Errorf("cancelled with %d of %d products collected and nothing listed unfinished", k.total(), s.Catalog().Len())
			}
			hits := s.Requests()
			wantNoDoubles(t, hits, nil)
			wantNoneLost(t, k, s.URL(), hits, o, nil)
		})
	}
}

// TestCollyQueue: colly/queue runs its own consumers (4 here) over a
// synchronous collector, with Colly's in-memory storage or the
// checkpoint's queue storage.
func TestCollyQueue(t *testing.T) {
	const threads = 4
	for _, storage := range []string{"InMemoryQueueStorage", "checkpoint.QueueStorage"} {
		for _, degrade := range []bool{false, true} {
			t.Run(storage+"/"+map[bool]string{false: "healthy", true: "degrading"}[degrade], func(t *testing.T) {
				cfg := testserver.Config{Products: 30}
				if degrade {
					cfg = testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}}
				}
				s := startStore(t, cfg)
				c := colly.NewCollector()
				opts := usageOpts{retry: true, follow: followNone}
				var qs queue.Storage = &queue.InMemoryQueueStorage{MaxSize: 10000}
				if storage != "InMemoryQueueStorage" {
					cp, err := checkpoint.New(memory.New(), checkpoint.Config{})
					if err != nil {
						t.Fatal(err)
					}
					opts.checkpoint = cp
					qs = cp.QueueStorage()
				}
				k := wireUsage(t, c, opts)
				q, err := queue.New(threads, qs)
				if err != nil {
					t.Fatal(err)
				}
				urls := productURLs(s.URL(), upTo(s.Catalog().Len())...)
				for _, u := range urls {
					if err := q.AddURL(u); err != nil {
						t.Fatal(err)
					}
				}
				var runErr error
				o := k.run(func() { runErr = q.Run(c) })
				if runErr != nil {
					t.Errorf("Run: %v", runErr)
				}
				hits := s.Requests()
				if degrade {
					wantEnding(t, o, outcome.Tripped)
					wantBound(t, s, threads)
				} else {
					wantEnding(t, o, outcome.Complete)
					wantProducts(t, k, urls)
				}
				wantNoDoubles(t, hits, nil)
				wantNoneLost(t, k, s.URL(), hits, o, nil)
			})
		}
	}
}

// TestCollyPostAndRequestMethods: each product is POSTed once, and the
// first half also PUT with c.Request: two requests the user asked for.
func TestCollyPostAndRequestMethods(t *testing.T) {
	for _, degrade := range []bool{false, true} {
		t.Run(map[bool]string{false: "healthy", true: "degrading"}[degrade], func(t *testing.T) {
			cfg := testserver.Config{Products: 30}
			if degrade {
				cfg = testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}}
			}
			s := startStore(t, cfg)
			c := colly.NewCollector(colly.Async(true))
			k := wireUsage(t, c, usageOpts{retry: true, follow: followNone})
			n := s.Catalog().Len()
			asked := map[string]int{}
			o := k.run(func() {
				for i := 1; i <= n; i++ {
					asked[testserver.ProductPath(i)]++
					c.Post(s.ProductURL(i), map[string]string{"sku": strconv.Itoa(i)})
				}
				for i := 1; i <= n/2; i++ {
					asked[testserver.ProductPath(i)]++
					c.Request(http.MethodPut, s.ProductURL(i), strings.NewReader("qty=1"), nil, nil)
				}
			})
			hits := s.Requests()
			if degrade {
				wantEnding(t, o, outcome.Tripped)
				wantBound(t, s, collyNeed())
			} else {
				wantEnding(t, o, outcome.Complete)
				for p, a := range asked {
					if got := k.recordsFor(s.URL() + p); got != a {
						t.Errorf("%s: %d records, asked %d times", p, got, a)
					}
				}
			}
			wantNoDoubles(t, hits, asked)
			wantNoneLost(t, k, s.URL(), hits, o, nil)
		})
	}
}

// TestCollyOnResponseHeadersAbort: the user aborts every third product
// once its headers are in. What the user aborted is not work left, and not
// a failure of the site.
func TestCollyOnResponseHeadersAbort(t *testing.T) {
	crawlFeature(t, feature{name: "OnResponseHeaders abort", async: true,
		user: func(c *colly.Collector) {
			c.OnResponseHeaders(func(r *colly.Response) {
				if n := skuOf(r.Request.URL.Path); n > 0 && n%3 == 0 {
					r.Request.Abort()
				}
			})
		},
		want:   func(cat testserver.Catalog) []int { return skus(cat, func(n int) bool { return n%3 != 0 }) },
		chosen: func(cat testserver.Catalog) []int { return skus(cat, func(n int) bool { return n%3 == 0 }) },
	})
}

// skus is the product numbers of cat for which keep says yes.
func skus(cat testserver.Catalog, keep func(int) bool) []int {
	var ns []int
	for n := 1; n <= cat.Len(); n++ {
		if keep(n) {
			ns = append(ns, n)
		}
	}
	return ns
}

// TestCollyVisitFromCallbacks: links followed with the collector's own
// Visit from OnHTML (a fresh context and depth per page), sync and async.
func TestCollyVisitFromCallbacks(t *testing.T) {
	for _, f := range []feature{
		{name: "sync", follow: followCollector},
		{name: "async", async: true, follow: followCollector},
	} {
		t.Run(f.name, func(t *testing.T) { crawlFeature(t, f) })
	}
}

// TestCollyCheckHead: with CheckHead, c.Visit sends a HEAD before each GET:
// two requests per product the user asked for by setting it.
func TestCollyCheckHead(t *testing.T) {
	for _, degrade := range []bool{false, true} {
		t.Run(map[bool]string{false: "healthy", true: "degrading"}[degrade], func(t *testing.T) {
			cfg := testserver.Config{Products: 30}
			if degrade {
				cfg = testserver.Config{Products: 100, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 20}}
			}
			s := startStore(t, cfg)
			c := colly.NewCollector(colly.Async(true), colly.CheckHead())
			if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
				t.Fatal(err)
			}
			k := wireUsage(t, c, usageOpts{retry: true, follow: followNone})
			urls := productURLs(s.URL(), upTo(s.Catalog().Len())...)
			asked := map[string]int{}
			o := k.run(func() {
				for _, u := range urls {
					asked[pathOf(u)] = 2
					c.Visit(u)
				}
			})
			hits := s.Requests()
			if un := k.b.Unfinished(); o.State != outcome.Complete && len(un.URLs) > 0 {
				t.Logf("unfinished: %d, e.g. %+v; hits: %d", un.Total, un.URLs[0], len(hits))
			}
			if degrade {
				wantEnding(t, o, outcome.Tripped)
				wantBound(t, s, 4)
			} else {
				wantEnding(t, o, outcome.Complete)
				wantProducts(t, k, urls)
				for _, u := range urls {
					if n := s.CountPath(pathOf(u)); n != 2 {
						t.Errorf("%s: %d requests, want 2 (HEAD and GET)", pathOf(u), n)
						break
					}
				}
			}
			wantNoDoubles(t, hits, asked)
			wantNoneLost(t, k, s.URL(), hits, o, nil)
		})
	}
}

// TestCollyDetectCharset: the store's front drops the charset from every
// Content-Type, so Colly detects it from the body and re-encodes.
func TestCollyDetectCharset(t *testing.T) {
	frontOf := func(t *testing.T, s *testserver.Store) func(w http.ResponseWriter, r *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			s.ServeHTTP(contentTypeWriter{ResponseWriter: w, ct: "text/html"}, r)
			return true
		}
	}
	for _, degrade := range []bool{false, true} {
		t.Run(map[bool]string{false: "healthy", true: "degrading"}[degrade], func(t *testing.T) {
			var s *testserver.Store
			if degrade {
				s = degradingStore(t)
			} else {
				s = healthyStore(t)
			}
			srv := front(t, s, frontOf(t, s))
			c := colly.NewCollector(colly.Async(true), colly.DetectCharset())
			k := wireUsage(t, c, usageOpts{retry: true})
			o := k.run(func() { c.Visit(srv.URL + "/") })
			hits := s.Requests()
			if degrade {
				wantEnding(t, o, outcome.Tripped)
				wantBound(t, s, collyNeed())
			} else {
				wantEnding(t, o, outcome.Complete)
				wantProducts(t, k, productURLs(srv.URL, upTo(s.Catalog().Len())...))
			}
			wantNoDoubles(t, hits, nil)
			wantNoneLost(t, k, srv.URL, hits, o, nil)
		})
	}
}

// contentTypeWriter replaces the Content-Type the store answers with.
type contentTypeWriter struct {
	http.ResponseWriter
	ct string
}

func (w contentTypeWriter) WriteHeader(code int) {
	if w.Header().Get("Content-Type") != "" {
		w.Header().Set("Content-Type", w.ct)
	}
	w.ResponseWriter.WriteHeader(code)
}
