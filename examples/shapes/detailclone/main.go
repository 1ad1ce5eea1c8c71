// Command detailclone scrapes a shop in the shape many Colly programs
// take: a listing collector walks the listing pages from a queue, and a
// detail collector, its Clone, scrapes the product pages the listing
// hands it with the listing's Ctx. The program counts each request's
// attempts and failures in its Ctx and logs both for a request that fails.
// Breakwater is added as the README's Usage adds it, on both collectors.
//
//	go run ./shapes/detailclone https://shop.example/ > products.jsonl
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/rs/zerolog"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: detailclone START_URL > products.jsonl")
		os.Exit(outcome.Usage)
	}
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel)
	code, err := run(os.Args[1], "crawl.db", clock.System, log, os.Stdout, os.Stderr)
	if err != nil {
		log.Error().Err(err).Msg("detailclone: the crawl could not run")
	}
	os.Exit(code)
}

// run crawls from start, checkpointed in the file ckpt, writes one JSON
// line per product to out and the report to rep, and returns the exit
// code. clk is the machine's clock (a test moves it on between runs).
func run(start, ckpt string, clk clock.Clock, log zerolog.Logger, out, rep io.Writer) (int, error) {
	// The listing collector is synchronous: the queue's thread runs each
	// listing page through its callbacks.
	c := colly.NewCollector()
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}) // shared with the clone

	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}},
		},
	})
	if err != nil {
		return 64, err
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Logger: log, Clock: clk})
	if err != nil {
		return 64, err
	}
	st, err := bolt.Open(ckpt)
	if err != nil {
		return 64, err
	}
	defer st.Close()
	cp, err := checkpoint.New(st, checkpoint.Config{Clock: clk})
	if err != nil {
		return 64, err
	}
	defer cp.Close()
	if err := breakwater.Use(c, v, b, cp); err != nil {
		return 64, err
	}
	// The detail collector: a clone shares the listing's client, limits
	// and storage, and copies none of its callbacks, Breakwater's
	// included, so it is wired too.
	dc := c.Clone()
	dc.Async = true
	if err := breakwater.Use(dc, v, b, cp); err != nil {
		return 64, err
	}

	q, err := queue.New(1, &queue.InMemoryQueueStorage{MaxSize: 10000})
	if err != nil {
		return 64, err
	}

	countAttempts(c, log)
	countAttempts(dc, log)

	// The listing: each product goes to the detail collector with the
	// listing's Ctx, which tells the product page where it was listed;
	// the next listing page goes to the queue.
	c.OnRequest(func(r *colly.Request) { r.Ctx.Put("listing", r.URL.String()) })
	c.OnHTML("a.product-link", func(e *colly.HTMLElement) {
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if err := dc.Request("GET", u, nil, e.Request.Ctx, nil); err != nil {
			b.NotVisited(u, err)
		}
	})
	c.OnHTML("a.next", func(e *colly.HTMLElement) {
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if err := q.AddURL(u); err != nil {
			b.NotVisited(u, err)
		}
	})
	c.OnError(breaker.RetryOnError(3))

	// The detail pages: these callbacks exist on the clone alone.
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	var records int64
	perDomain := map[string]int64{}
	dc.OnHTML("div.product", func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(map[string]string{"url": e.Request.URL.String(), "title": e.ChildText("h1.title"),
			"listing": e.Request.Ctx.Get("listing")})
		records++
		perDomain[e.Request.URL.Host]++
	})
	dc.OnError(breaker.RetryOnError(3))

	if _, err := cp.Resume(c); err != nil {
		return 1, err
	}
	if err := q.AddURL(start); err != nil {
		return 64, err
	}
	if err := q.Run(c); err != nil {
		return 1, err
	}
	c.Wait()
	dc.Wait()

	o := outcome.Decide(records, v, b, cp)
	cp.SetOutcome(o)
	report.New(o, report.Sources{Breaker: b, Validator: v, Records: perDomain}).Write(rep, report.Text)
	return o.State.ExitCode(), nil
}

// countAttempts counts each request's attempts and failures in its Ctx
// (under keys of its URL: a listing's Ctx is shared by its product pages)
// and logs both for every request that fails.
func countAttempts(c *colly.Collector, log zerolog.Logger) {
	c.OnRequest(func(r *colly.Request) { bump(r.Ctx, "attempt "+r.URL.String()) })
	c.OnError(func(r *colly.Response, err error) {
		u := r.Request.URL.String()
		n, _ := strconv.Atoi(r.Request.Ctx.Get("attempt " + u))
		log.Warn().Str("url", u).Int("attempt", n).Int("failures", bump(r.Request.Ctx, "failures "+u)).Err(err).
			Msg("detailclone: not fetched")
	})
}

// bump adds one to the count under key in ctx and returns it.
func bump(ctx *colly.Context, key string) int {
	n, _ := strconv.Atoi(ctx.Get(key))
	ctx.Put(key, strconv.Itoa(n+1))
	return n + 1
}
