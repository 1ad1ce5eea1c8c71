package checkpoint_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// cloneShop is the scraper of the README's Usage with its product pages
// fetched by a clone: the listing collector c feeds the detail collector
// dc := c.Clone() from its OnHTML, with the listing's Ctx, and only dc
// saves products. Each run builds everything afresh over the same
// checkpoint file, as a new process does.
type cloneShop struct {
	t     *testing.T
	store *testserver.Store
	path  string
	clk   *clocktest.Fake
	// wire registers the clone (or does not); nil leaves it unregistered.
	wire func(cp *checkpoint.Checkpoint, dc *colly.Collector, v *validate.Validator, b *breaker.Breaker) error
	// queue runs the crawl as Colly's queue on cp.QueueStorage (collectors
	// not Async) instead of Resume and Visit.
	queue bool

	mu      sync.Mutex
	written map[string]int // product path → times the program saved it, over all runs
}

// run is one process: it returns its exit code and its outcome.
func (p *cloneShop) run() (int, outcome.Outcome) {
	t := p.t
	c := colly.NewCollector(colly.Async(!p.queue))
	c.SetRequestTimeout(5 * time.Second)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}); err != nil {
		t.Fatal(err)
	}
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require(testserver.TitleSelector)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: p.clk})
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(p.path, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cp, err := checkpoint.New(st, checkpoint.Config{Clock: p.clk})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := breakwater.Use(c, v, b, cp); err != nil {
		t.Fatal(err)
	}
	dc := c.Clone()
	if p.wire != nil {
		if err := p.wire(cp, dc, v, b); err != nil {
			t.Fatal(err)
		}
	}
	var records int64
	dc.OnHTML("div.product", func(e *colly.HTMLElement) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.written[e.Request.URL.Path]++
		records++
	})
	c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) {
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if err := dc.Request("GET", u, nil, e.Request.Ctx, nil); err != nil {
			b.NotVisited(u, err)
		}
	})
	c.OnHTML(testserver.NextSelector, func(e *colly.HTMLElement) {
		if err := e.Request.Visit(e.Attr("href")); err != nil {
			b.NotVisited(e.Request.AbsoluteURL(e.Attr("href")), err)
		}
	})

	start := p.store.URL() + "/"
	var q *queue.Queue
	if p.queue {
		if q, err = queue.New(2, cp.QueueStorage()); err != nil {
			t.Fatal(err)
		}
		if err := q.AddURL(start); err != nil {
			t.Fatal(err)
		}
	} else {
		if _, err := cp.Resume(c); err != nil {
			t.Fatal(err)
		}
		if err := c.Visit(start); err != nil {
			b.NotVisited(start, err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if q != nil {
			_ = q.Run(c)
		}
		c.Wait()
		dc.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a run did not end within 30s")
	}
	p.mu.Lock()
	n := records
	p.mu.Unlock()
	o := outcome.Decide(n, v, b, cp)
	cp.SetOutcome(o)
	return o.State.ExitCode(), o
}

// missing lists the products never saved and those saved more than once.
func (p *cloneShop) missing(n int) (never, twice []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 1; i <= n; i++ {
		switch w := p.written[testserver.ProductPath(i)]; {
		case w == 0:
			never = append(never, testserver.ProductPath(i))
		case w > 1:
			twice = append(twice, testserver.ProductPath(i))
		}
	}
	return never, twice
}

const cloneShopProducts = 100

// newCloneShop starts a store of 100 products that fails after 30 requests.
func newCloneShop(t *testing.T, wire func(*checkpoint.Checkpoint, *colly.Collector, *validate.Validator, *breaker.Breaker) error) *cloneShop {
	store := startStore(t, testserver.Config{Products: cloneShopProducts, PerPage: 10,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
	return &cloneShop{t: t, store: store, path: dbPath(t), wire: wire, written: map[string]int{},
		clk: clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
}

// TestResumeRunsAClonesURLsOnTheClone: the store fails after 30 requests,
// the first run trips; the store heals and the program is run again until
// it ends complete. Judged from outside: every product is saved exactly
// once over the runs, and the final run exits 0 only when all are. The
// clone is registered as breakwater.Use or as checkpoint.Register's doc
// says; either way its URLs resume on it, not on the collector Resume is
// handed (which has none of its callbacks).
func TestResumeRunsAClonesURLsOnTheClone(t *testing.T) {
	for _, tc := range []struct {
		name string
		wire func(*checkpoint.Checkpoint, *colly.Collector, *validate.Validator, *breaker.Breaker) error
	}{
		{"Use", func(cp *checkpoint.Checkpoint, dc *colly.Collector, v *validate.Validator, b *breaker.Breaker) error {
			return breakwater.Use(dc, v, b, cp)
		}},
		{"Register", func(cp *checkpoint.Checkpoint, dc *colly.Collector, _ *validate.Validator, _ *breaker.Breaker) error {
			cp.Register(dc)
			return nil
		}},
		{"Named", func(cp *checkpoint.Checkpoint, dc *colly.Collector, v *validate.Validator, b *breaker.Breaker) error {
			if err := cp.Name(dc, "detail"); err != nil {
				return err
			}
			return breakwater.Use(dc, v, b, cp)
		}},
		{"Queue", func(cp *checkpoint.Checkpoint, dc *colly.Collector, v *validate.Validator, b *breaker.Breaker) error {
			return breakwater.Use(dc, v, b, cp)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newCloneShop(t, tc.wire)
			p.queue = tc.name == "Queue"
			code, o := p.run()
			if code != 2 {
				t.Fatalf("first run: exit %d (%s: %s), want 2: the store fails after 30 requests", code, o.State, o.Reason)
			}
			if never, _ := p.missing(cloneShopProducts); len(never) == 0 {
				t.Fatal("the first run saved every product: the test proves nothing of a resume")
			}
			if err := p.store.SetScenario(testserver.Scenario{}); err != nil {
				t.Fatal(err)
			}
			runs := 1
			for code != 0 && runs < 5 {
				p.clk.Advance(10 * time.Minute) // past any cooldown
				code, o = p.run()
				runs++
			}
			never, twice := p.missing(cloneShopProducts)
			if len(twice) > 0 {
				t.Errorf("products saved more than once: %v", twice)
			}
			if code == 0 && len(never) > 0 {
				t.Errorf("run %d exits 0 (%s) with %d of %d products saved; never saved: %v", runs, o.Reason,
					cloneShopProducts-len(never), cloneShopProducts, never)
			}
			if code != 0 {
				t.Errorf("after %d runs on a healed store: exit %d (%s: %s), want 0", runs, code, o.State, o.Reason)
			}
		})
	}
}

// TestAnUnregisteredClonesUnfinishedURLsKeepTheEndingFromComplete: the
// same program with the clone not registered with the checkpoint. Its
// URLs left unfinished by the trip cannot be resumed on it, and are not
// resumed on another collector: no run ends complete (exit 0) while a
// product is missing, and the ending says to register the clone.
func TestAnUnregisteredClonesUnfinishedURLsKeepTheEndingFromComplete(t *testing.T) {
	p := newCloneShop(t, nil)
	code, o := p.run()
	if code == 0 {
		t.Fatalf("first run: exit 0 (%s) on a store that fails after 30 requests", o.Reason)
	}
	if never, _ := p.missing(cloneShopProducts); len(never) == 0 {
		t.Fatal("the first run saved every product: the test proves nothing of a resume")
	}
	if err := p.store.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	for run := 2; run <= 3; run++ {
		p.clk.Advance(10 * time.Minute)
		code, o = p.run()
		never, twice := p.missing(cloneShopProducts)
		if len(twice) > 0 {
			t.Errorf("run %d: products saved more than once: %v", run, twice)
		}
		if len(never) == 0 {
			t.Fatalf("run %d: every product saved: the clone's URLs did resume somewhere (%s)", run, o.Reason)
		}
		if code == 0 {
			t.Fatalf("run %d exits 0 (%s) with %d products never saved", run, o.Reason, len(never))
		}
		t.Logf("run %d: exit %d, %s: %s", run, code, o.State, o.Reason)
		if !strings.Contains(o.Reason, "register the clone with the checkpoint") || !strings.Contains(o.Reason, "Adopt") {
			t.Errorf("run %d ends %s: %q; want the ending to say to register the clone and Adopt it", run, o.State, o.Reason)
		}
	}
	// The program fixed as the ending says: the clone registered, and
	// handed the URLs it asked for unregistered.
	p.wire = func(cp *checkpoint.Checkpoint, dc *colly.Collector, v *validate.Validator, b *breaker.Breaker) error {
		if err := breakwater.Use(dc, v, b, cp); err != nil {
			return err
		}
		return cp.Adopt(dc)
	}
	p.clk.Advance(10 * time.Minute)
	code, o = p.run()
	never, twice := p.missing(cloneShopProducts)
	if code != 0 || len(never) > 0 || len(twice) > 0 {
		t.Errorf("with the clone registered and adopted: exit %d (%s: %s), never saved %v, saved twice %v; want 0, every product once",
			code, o.State, o.Reason, never, twice)
	}
}

// TestNameAndAdoptRefuseWhatCannotBeKept: a collector's name is its own,
// given before it is registered; Adopt takes a registered collector; a
// collector registered twice keeps its first name.
func TestNameAndAdoptRefuseWhatCannotBeKept(t *testing.T) {
	cp, err := checkpoint.New(memory.New(), checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	c := colly.NewCollector()
	dc := c.Clone()
	other := c.Clone()
	for _, name := range []string{"", "12", "a b", strings.Repeat("x", 65), "détail"} {
		if err := cp.Name(dc, name); err == nil {
			t.Errorf("Name(%q) accepted", name)
		}
	}
	if err := cp.Name(nil, "detail"); err == nil {
		t.Error("Name of a nil collector accepted")
	}
	if err := cp.Name(dc, "detail"); err != nil {
		t.Fatal(err)
	}
	if err := cp.Name(other, "detail"); err == nil {
		t.Error("a second collector took the name \"detail\"")
	}
	if err := cp.Adopt(dc); err == nil {
		t.Error("Adopt took a collector not registered")
	}
	cp.Register(c)
	cp.Register(dc)
	cp.Register(dc) // again: nothing
	if err := cp.Name(dc, "product"); err == nil {
		t.Error("a registered collector was renamed")
	}
	if err := cp.Name(dc, "detail"); err != nil {
		t.Errorf("naming a registered collector by its own name: %v", err)
	}
	if err := cp.Adopt(dc); err != nil {
		t.Errorf("Adopt of a registered collector: %v", err)
	}
	if _, err := cp.Resume(nil); err == nil {
		t.Error("Resume(nil) accepted")
	}
}
