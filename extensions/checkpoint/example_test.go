package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A crawl whose store degrades trips and saves what it did not finish; a
// later run resumes it and fetches only that.
func Example() {
	store, _ := testserver.Start(testserver.Config{Products: 40, PerPage: 40,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 25}})
	defer store.Close()
	dir, _ := os.MkdirTemp("", "checkpoint-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "crawl.db")
	clk := clocktest.NewFake(time.Now()) // so the example need not wait out a cooldown

	run := func() {
		st, err := bolt.Open(path)
		if err != nil {
			fmt.Println(err) // names the file and says what to do
			return
		}
		defer st.Close() // after cp.Close
		cp, err := checkpoint.New(st, checkpoint.Config{Clock: clk})
		if err != nil {
			fmt.Println(err)
			return
		}
		b, _ := breaker.New(breaker.Config{Profile: breaker.Standard(), Clock: clk})
		_ = cp.Observe(b) // a domain saved open stays open until its cooldown ends

		c := colly.NewCollector(colly.Async(true))
		_ = c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1})
		breakwater.Use(c, b, cp)
		c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) {
			_ = e.Request.Visit(e.Attr("href"))
		})
		n, _ := cp.Resume(c) // what earlier runs left unfinished
		_ = c.Visit(store.URL() + "/")
		c.Wait()

		o := outcome.Decide(-1, b, cp)
		cp.SetOutcome(o)
		counts, _ := cp.Counts()
		fmt.Printf("re-driven %d, %s: done %d, unfinished %d\n", n, o.State,
			counts[storage.Done], counts[storage.Failed]+counts[storage.Parked])
		_ = cp.Close()
	}

	run() // degrades after 25 pages: the breaker trips
	_ = store.SetScenario(testserver.Scenario{})
	clk.Advance(2 * time.Minute) // rescheduled after the 60 s cooldown
	run()
	fmt.Println("requests for pages done before the trip:", store.Count()-store.CountMode(testserver.Degrade)-41)
	// Output:
	// re-driven 0, tripped: done 25, unfinished 16
	// re-driven 16, complete: done 41, unfinished 0
	// requests for pages done before the trip: 0
}
