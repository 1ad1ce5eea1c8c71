// Command depthfollow follows every link of a site to a fixed depth, the
// first Colly program most people write: MaxDepth bounds the crawl and
// AllowedDomains keeps it on the start URL's host. It writes each product
// page it meets. Breakwater is added as the README's Usage adds it.
//
//	go run ./shapes/depthfollow https://shop.example/ > products.jsonl
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
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
	"github.com/rs/zerolog"
)

// maxDepth is how far from the start page links are followed: the start
// page is depth 1, the pages it links to depth 2.
const maxDepth = 2

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: depthfollow START_URL > products.jsonl")
		os.Exit(outcome.Usage)
	}
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel)
	code, err := run(os.Args[1], "crawl.db", clock.System, log, os.Stdout, os.Stderr)
	if err != nil {
		log.Error().Err(err).Msg("depthfollow: the crawl could not run")
	}
	os.Exit(code)
}

// run crawls from start, checkpointed in the file ckpt, writes one JSON
// line per product to out and the report to rep, and returns the exit
// code. clk is the machine's clock (a test moves it on between runs).
func run(start, ckpt string, clk clock.Clock, log zerolog.Logger, out, rep io.Writer) (int, error) {
	u, err := url.Parse(start)
	if err != nil || u.Hostname() == "" {
		return 64, fmt.Errorf("depthfollow: the start URL %q is not an absolute URL: %v", start, err)
	}
	c := colly.NewCollector(colly.Async(true), colly.MaxDepth(maxDepth), colly.AllowedDomains(u.Hostname()))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})

	// Product pages and listing pages must be whole; any other page of
	// the site is taken as it comes.
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0)},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}},
			{Pattern: `/list/|/$`, Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")}},
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

	var mu sync.Mutex
	enc := json.NewEncoder(out)
	var records int64
	perDomain := map[string]int64{}
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(map[string]string{"url": e.Request.URL.String(), "title": e.ChildText("h1.title")})
		records++
		perDomain[e.Request.URL.Host]++
	})
	// Every link; Colly drops those past MaxDepth, off the host, or
	// visited already, and NotVisited lists none of those.
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if err := e.Request.Visit(e.Attr("href")); err != nil {
			b.NotVisited(e.Request.AbsoluteURL(e.Attr("href")), err)
		}
	})
	c.OnError(breaker.RetryOnError(3))

	if _, err := cp.Resume(c); err != nil {
		return 1, err
	}
	if err := c.Visit(start); err != nil {
		b.NotVisited(start, err)
	}
	c.Wait()

	o := outcome.Decide(records, v, b, cp)
	cp.SetOutcome(o)
	report.New(o, report.Sources{Breaker: b, Validator: v, Records: perDomain}).Write(rep, report.Text)
	return o.State.ExitCode(), nil
}
