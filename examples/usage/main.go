// Command usage is the README's Usage: go run ./examples/usage https://shop.example/ > products.jsonl
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

func main() {
	// A crash exits 1, not Go's 2 (tripped); SIGINT or SIGTERM cancel ctx.
	breakwater.Main(func(ctx context.Context) int {
		if len(os.Args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: usage START_URL > products.jsonl")
			return outcome.Usage
		}
		log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel)
		code, err := run(ctx, os.Args[1], "crawl.db", log, os.Stdout)
		if err != nil {
			log.Error().Err(err).Msg("usage: the crawl could not run")
		}
		return code // 0 complete, 2 tripped (run it again later), 3 empty, 1 error, 64 bad configuration
	})
}

// run crawls from start until ctx is cancelled, checkpointed in the file
// ckpt, writes one JSON line per product to out (each once across runs),
// and returns the exit code.
func run(ctx context.Context, start, ckpt string, log zerolog.Logger, out io.Writer) (int, error) {
	// ctx cancelled (SIGINT or SIGTERM, under Main): no more requests.
	c := colly.NewCollector(colly.Async(true), colly.StdlibContext(ctx))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}) // yours, if you have one

	// Product pages must be full-size and carry a title; listing pages
	// (small, when they list one product) a product list. A 200 that is
	// neither is not data: it counts against the site.
	v, err := validate.New(validate.Config{
		Pages:  []validate.Page{{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}}},
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
	})
	if err != nil {
		return 64, err // bad configuration: nothing was sent
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Logger: log})
	if err != nil {
		return 64, err
	}
	st, err := bolt.Open(ckpt) // the crawl's checkpoint, one file: a rerun resumes what is left
	if err != nil {
		return 64, err // names the file and what to do
	}
	defer st.Close()
	cp, err := checkpoint.New(st, checkpoint.Config{})
	if err != nil {
		return 64, err
	}
	defer cp.Close()
	if err := breakwater.Use(c, v, b, cp); err != nil { // in the order they need; cp follows b
		return 64, err
	}
	sink, err := cp.Sink(out, checkpoint.SinkConfig{}) // each product once across kills and resumes
	if err != nil {
		return 64, err // a file that is not this crawl's output: left as it is
	}

	var mu sync.Mutex
	var records int64
	perDomain := map[string]int64{} // for the report's records column
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		rec := map[string]string{"url": e.Request.URL.String(), "title": e.ChildText("h1.title")}
		if err := sink.Write(e.Request, rec); err != nil {
			log.Error().Err(err).Msg("usage: a product not written; the next run writes it")
		}
		mu.Lock()
		defer mu.Unlock()
		records++
		perDomain[e.Request.URL.Host]++
	})
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) {
		if err := e.Request.Visit(e.Attr("href")); err != nil {
			b.NotVisited(e.Request.AbsoluteURL(e.Attr("href")), err) // a cap of Colly's (MaxRequests) left it: the ending names it
		}
	})
	c.OnError(breaker.RetryOnError(3)) // 5xx and timeouts only: never a refusal, a 429, a 404

	if _, err := cp.Resume(c); err != nil { // re-drive what earlier runs left
		return 1, err
	}
	if err := c.Visit(start); err != nil {
		b.NotVisited(start, err) // already done by an earlier run, or a cap of Colly's
	}
	c.Wait()

	o := outcome.Decide(records, v, b, cp) // complete, tripped, empty or error
	cp.SetOutcome(o)
	report.New(o, report.Sources{Breaker: b, Validator: v, Records: perDomain}).Write(os.Stderr, report.Text)
	return o.State.ExitCode(), nil // 0, 2, 3 or 1
}
