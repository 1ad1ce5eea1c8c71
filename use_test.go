package breakwater_test

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A store that turns into 900-byte consent shells after 10 good pages: the
// validator makes every shell a failure, the breaker trips after the
// standard profile's 10 of them, and the run says so.
func ExampleUse() {
	store, _ := testserver.Start(testserver.Config{Products: 50,
		Scenario: testserver.Scenario{Mode: testserver.Empty, After: 10}})
	defer store.Close()

	c := colly.NewCollector()
	v, _ := validate.New(validate.Config{
		// Product pages by their own structure, listing pages by theirs.
		Pages:  []validate.Page{{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}}},
		Checks: []validate.Check{validate.Require("ul.products")},
	})
	b, _ := breaker.New(breaker.Config{Profile: breaker.Standard()})
	err := breakwater.Use(c, v, b) // Use hands the breaker the validator: pass it once
	if err != nil {
		fmt.Println(err)
		return
	}
	saved := 0
	c.OnScraped(func(r *colly.Response) {
		if verdict, _ := v.VerdictOf(r); verdict.Valid() {
			saved++
		}
	})
	for i := 1; i <= 50; i++ {
		c.Visit(store.ProductURL(i))
	}
	o := outcome.Decide(int64(saved), v, b)
	fmt.Println("requests:", store.Count(), "saved:", saved)
	fmt.Println("outcome:", o.State, "exit:", o.State.ExitCode())
	// Output:
	// requests: 20 saved: 10
	// outcome: tripped exit: 2
}

type counting struct{ n atomic.Int32 }

func (e *counting) Register(c *colly.Collector) { e.n.Add(1) }

func TestUseRegistersEachExtensionOnceInOrder(t *testing.T) {
	var a, b counting
	c := colly.NewCollector()
	breakwater.Use(c, &a, nil, &b)
	if a.n.Load() != 1 || b.n.Load() != 1 {
		t.Fatalf("registered %d and %d times, want once each", a.n.Load(), b.n.Load())
	}
	// Register is also a colly.CollectorOption.
	var opt colly.CollectorOption = a.Register
	colly.NewCollector(opt)
	if a.n.Load() != 2 {
		t.Fatal("Register did not work as a colly.CollectorOption")
	}
}

// Wiring mistakes are refused before a request is sent, with nothing
// registered on the collector.
func TestUseRefusesWhatCannotBeWired(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 2})
	b1, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpoint.New(memory.New(), checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, exts := range map[string][]breakwater.Extension{
		"two breakers":                {b1, b2},
		"a checkpoint and no breaker": {cp},
	} {
		c := colly.NewCollector()
		if err := breakwater.Use(c, exts...); err == nil {
			t.Errorf("%s: Use accepted it", name)
		}
		if err := c.Visit(store.ProductURL(1)); err != nil {
			t.Fatal(err)
		}
	}
	if store.Count() != 2 {
		t.Fatalf("the store received %d requests, want 2", store.Count())
	}
	if len(b1.Stats())+len(b2.Stats()) != 0 || cp.Stats().Updates != 0 {
		t.Fatalf("a refused wiring left callbacks behind: breakers saw %d and %d domains, the checkpoint %+v",
			len(b1.Stats()), len(b2.Stats()), cp.Stats())
	}
}

// The package doc's example is ExampleUse's code, line for line, so the doc
// cannot drift from what is compiled and run.
func TestThePackageDocShowsExampleUse(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("use_test.go")
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, l := range strings.Split(string(doc), "\n") {
		code, ok := strings.CutPrefix(l, "//\t")
		if !ok {
			continue
		}
		shown++
		if !strings.Contains(string(example), strings.TrimSpace(code)) {
			t.Errorf("doc.go shows %q, which ExampleUse does not run", strings.TrimSpace(code))
		}
	}
	if shown < 5 {
		t.Fatalf("found %d code lines in doc.go's example; the test no longer reads it", shown)
	}
}
