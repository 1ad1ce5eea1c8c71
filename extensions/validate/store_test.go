package validate_test

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// The breaker consults the validator through its own small interface, and
// the run's outcome weighs its evidence.
var (
	_ breaker.Validator = (*validate.Validator)(nil)
	_ outcome.Judge     = (*validate.Validator)(nil)
)

// threeStrikes is seed 002's profile: three failures in a row trip, and the
// cooldown is long. The rate rule is out of reach (every outcome of a full
// window must fail), so the consecutive rule decides.
var threeStrikes = breaker.Profile{Name: "three-strikes", WindowSize: 20, FailureThreshold: 1, ConsecutiveFailures: 3, Cooldown: 10 * time.Minute, HalfOpenProbes: 1}

func startStore(t *testing.T, sc testserver.Scenario) *testserver.Store {
	t.Helper()
	s, err := testserver.Start(testserver.Config{Products: 60, Scenario: sc})
	if err != nil {
		t.Fatalf("start test store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func storeValidator(t *testing.T, c validate.Config) *validate.Validator {
	c.Checks = []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}
	return mustNew(t, c)
}

// TestTestStorePagesScore: the store's consent shell, restyled page and
// product page, fetched over loopback by a real collector.
func TestTestStorePagesScore(t *testing.T) {
	cases := []struct {
		mode testserver.Mode
		want func(len int) []string
	}{
		{testserver.Healthy, func(int) []string { return nil }},
		{testserver.Empty, func(n int) []string {
			return []string{"below floor: " + itoa(n) + " < 1024 bytes", `missing selector "div.product h1.title"`}
		}},
		{testserver.Restyled, func(int) []string { return []string{`missing selector "div.product h1.title"`} }},
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			store := startStore(t, testserver.Scenario{Mode: tc.mode})
			v := storeValidator(t, validate.Config{})
			c := colly.NewCollector(v.Register)
			vs := collect(t, c, v)
			if err := c.Visit(store.ProductURL(7)); err != nil {
				t.Fatal(err)
			}
			got, ok := vs.get(testserver.ProductPath(7))
			if !ok {
				t.Fatal("not scored")
			}
			if !reflect.DeepEqual(texts(got), tc.want(got.Bytes)) {
				t.Fatalf("reasons %q, want %q (%d bytes)", texts(got), tc.want(got.Bytes), got.Bytes)
			}
			if got.Domain != store.Host() || got.Status != 200 {
				t.Fatalf("domain %q status %d", got.Domain, got.Status)
			}
			switch tc.mode {
			case testserver.Empty:
				if got.Bytes < 800 || got.Bytes >= 1024 || got.Bytes != len(testserver.ConsentShell()) {
					t.Fatalf("consent shell of %d bytes, want the store's ~900", got.Bytes)
				}
			case testserver.Restyled:
				if got.Bytes != len(store.Catalog().RestyledProductPage(7)) || got.Bytes < 30000 {
					t.Fatalf("restyled page of %d bytes, want full size", got.Bytes)
				}
			}
		})
	}
}

// run is how the run ends, decided by the project's outcome package from
// the validator's and the breaker's evidence.
func run(v *validate.Validator, b *breaker.Breaker) string {
	return outcome.Decide(-1, v, b).State.String()
}

// crawlStore visits products 1..n of store with the validator registered
// before the breaker, parallelism p (1 = one at a time, sync).
func crawlStore(t *testing.T, store *testserver.Store, v *validate.Validator, b *breaker.Breaker, n, p int, opts ...colly.CollectorOption) {
	t.Helper()
	if p > 1 {
		opts = append(opts, colly.Async(true))
	}
	c := colly.NewCollector(opts...)
	if p > 1 {
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p}); err != nil {
			t.Fatal(err)
		}
	}
	breakwater.Use(c, v, b)
	for i := 1; i <= n; i++ {
		_ = c.Visit(store.ProductURL(i))
	}
	c.Wait()
}

// TestConsentCliffTripsOnPage3: seed 002's cliff. The store answers 5
// pages, then consent shells; with three strikes the breaker opens on the
// third shell and the store sees nothing more.
func TestConsentCliffTripsOnPage3(t *testing.T) {
	store := startStore(t, testserver.Scenario{Mode: testserver.Empty, After: 5})
	v := storeValidator(t, validate.Config{})
	var mu sync.Mutex
	var invalid []string
	b, err := breaker.New(breaker.Config{Profile: threeStrikes, Validator: v, OnAttempt: func(a observe.Attempt) {
		if a.Result.Class == circuit.Invalid {
			mu.Lock()
			invalid = append(invalid, a.Err.Error())
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	crawlStore(t, store, v, b, 40, 1)

	if got := store.Count(); got != 8 {
		t.Fatalf("store received %d requests, want 8: 5 pages, then the breaker trips on the 3rd shell", got)
	}
	if got := store.SentAfterFailing(); got != 3 {
		t.Fatalf("%d requests after the cliff, want 3", got)
	}
	if b.State(store.Host()) != circuit.Open {
		t.Fatalf("breaker %s, want open", b.State(store.Host()))
	}
	if len(invalid) != 3 || !strings.Contains(invalid[0], "below floor: ") {
		t.Fatalf("invalid outcomes %q", invalid)
	}
	if got := run(v, b); got != "tripped" {
		t.Fatalf("run ends %s, want tripped: a consent wall is the target's doing", got)
	}
}

// TestConsentCliffWithParallelism: with P requests in flight, at most P-1
// requests that already passed the gate land after the trip, and nothing
// is sent after it. When the trip comes has no tight bound in consecutive
// mode: a healthy page that completes after some shells resets the count,
// and while one slow healthy page holds a slot the others can cycle
// through shells (seen: the trip on the 10th request with P = 2).
func TestConsentCliffWithParallelism(t *testing.T) {
	for _, p := range []int{2, 4} {
		store := startStore(t, testserver.Scenario{Mode: testserver.Empty, After: 5})
		v := storeValidator(t, validate.Config{})
		var mu sync.Mutex
		atTrip := -1
		var refused int
		b, err := breaker.New(breaker.Config{Profile: threeStrikes, Validator: v, Pacing: breaker.Pacing{Parallelism: p}, OnTransition: func(tr circuit.Transition) {
			if tr.To == circuit.Open {
				mu.Lock()
				atTrip = store.Count()
				mu.Unlock()
			}
		}, OnRefused: func(*colly.Request, *circuit.OpenError) { mu.Lock(); refused++; mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		crawlStore(t, store, v, b, 40, p)
		got := store.Count()
		if atTrip < 8 || got-atTrip > p-1 {
			t.Errorf("parallelism %d: %d requests at the trip, %d in all: want at least 8 before and at most %d after", p, atTrip, got, p-1)
		}
		if got+refused != 40 {
			t.Errorf("parallelism %d: %d sent, %d refused, of 40", p, got, refused)
		}
		if b.State(store.Host()) != circuit.Open || len(v.Broken()) != 0 {
			t.Errorf("parallelism %d: breaker %s, broken %v", p, b.State(store.Host()), v.Broken())
		}
		t.Logf("parallelism %d: %d requests reached the store (%d at the trip), %d refused", p, got, atTrip, refused)
	}
}

// TestRestyledStoreEndsSelectorBroken: full-size 200s without the product
// markup trip the breaker just the same, but the run is an error: the
// selector broke, and the diagnosis is complete when the breaker trips.
func TestRestyledStoreEndsSelectorBroken(t *testing.T) {
	for _, tc := range []struct {
		profile breaker.Profile
		sent    int
	}{
		{threeStrikes, 5 + 3},
		{breaker.Standard(), 5 + 10}, // 10 failures trip it, the window full or not
	} {
		t.Run(tc.profile.Name, func(t *testing.T) {
			store := startStore(t, testserver.Scenario{Mode: testserver.Restyled, After: 5})
			var hooked brokenLog
			v := storeValidator(t, validate.Config{OnBroken: hooked.hook})
			b, err := breaker.New(breaker.Config{Profile: tc.profile, Validator: v})
			if err != nil {
				t.Fatal(err)
			}
			crawlStore(t, store, v, b, 60, 1)
			if got := store.Count(); got != tc.sent {
				t.Fatalf("store received %d requests, want %d", got, tc.sent)
			}
			if b.State(store.Host()) != circuit.Open {
				t.Fatalf("breaker %s, want open", b.State(store.Host()))
			}
			if len(hooked.got) != 1 {
				t.Fatalf("OnBroken ran %d times", len(hooked.got))
			}
			d := hooked.got[0]
			if d.Domain != store.Host() || !reflect.DeepEqual(d.Selectors, []string{testserver.TitleSelector}) || d.ValidBefore != 5 || len(d.Pages) != 3 {
				t.Fatalf("diagnosis %+v", d)
			}
			if d.Pages[0].URL != store.ProductURL(6) || d.Pages[2].URL != store.ProductURL(8) {
				t.Fatalf("evidence %s .. %s, want products 6..8", d.Pages[0].URL, d.Pages[2].URL)
			}
			o := outcome.Decide(-1, v, b)
			if o.State != outcome.Error || o.State.ExitCode() != 1 || !reflect.DeepEqual(o.Domains, []string{store.Host()}) || !strings.Contains(o.Reason, "selector_broken") {
				t.Fatalf("outcome %+v, want error (exit 1) for %s, not tripped", o, store.Host())
			}
		})
	}
}

// TestDegradingStoreEndsTrippedNeverBroken: 503s, hangs cut by the client's
// timeout, bodies cut short and consent shells all trip the breaker, and
// none of them is a broken selector.
func TestDegradingStoreEndsTrippedNeverBroken(t *testing.T) {
	for _, sc := range []testserver.Scenario{
		{Mode: testserver.Degrade, After: 5},
		{Mode: testserver.Hang, After: 5, Hold: 5 * time.Second},
		{Mode: testserver.Truncated, After: 5},
		{Mode: testserver.Empty, After: 5},
		{Mode: testserver.Slope, After: 5, Step: time.Millisecond, FailAfter: 3, Hold: 5 * time.Second},
	} {
		t.Run(sc.Mode.String(), func(t *testing.T) {
			store := startStore(t, sc)
			var hooked brokenLog
			v := storeValidator(t, validate.Config{OnBroken: hooked.hook})
			b, err := breaker.New(breaker.Config{Profile: threeStrikes, Validator: v})
			if err != nil {
				t.Fatal(err)
			}
			crawlStore(t, store, v, b, 40, 1, func(c *colly.Collector) { c.SetRequestTimeout(300 * time.Millisecond) })
			if got := run(v, b); got != "tripped" {
				t.Fatalf("run ends %s (broken %+v), want tripped", got, v.Broken())
			}
			if len(hooked.got) != 0 {
				t.Fatalf("OnBroken ran: %+v", hooked.got)
			}
			if store.SentAfterFailing() < 3 {
				t.Fatalf("only %d requests after the degradation", store.SentAfterFailing())
			}
		})
	}
}

// TestOutcomeCountsOnlyValidPages: a healthy crawl is complete with its
// valid pages as records; a crawl of consent shells with no breaker runs to
// the end and is empty, not complete, because no shell counts as a page.
func TestOutcomeCountsOnlyValidPages(t *testing.T) {
	for _, tc := range []struct {
		mode    testserver.Mode
		state   string
		records int64
	}{
		{testserver.Healthy, "complete", 12},
		{testserver.Empty, "empty", 0},
	} {
		store := startStore(t, testserver.Scenario{Mode: tc.mode})
		v := storeValidator(t, validate.Config{})
		c := colly.NewCollector(v.Register)
		for i := 1; i <= 12; i++ {
			_ = c.Visit(store.ProductURL(i))
		}
		o := outcome.Decide(-1, v)
		if o.State.String() != tc.state || o.Records != tc.records || store.Count() != 12 {
			t.Errorf("%s store: outcome %+v after %d requests, want %s with %d records", tc.mode, o, store.Count(), tc.state, tc.records)
		}
	}
}
