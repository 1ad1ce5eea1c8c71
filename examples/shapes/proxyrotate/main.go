// Command proxyrotate scrapes a shop through a rotating pool of proxies,
// as Colly's proxy.RoundRobinProxySwitcher does, with Breakwater's pool
// in its place so that a bad proxy is not taken for a bad site. Breakwater
// is added as the README's Usage adds it, and docs/proxies.md's wiring.
//
//	go run ./shapes/proxyrotate https://shop.example/ http://p1:8080 http://p2:8080 > products.jsonl
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: proxyrotate START_URL PROXY_URL... > products.jsonl")
		os.Exit(outcome.Usage)
	}
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel)
	code, err := run(os.Args[1], os.Args[2:], "crawl.db", clock.System, log, os.Stdout, os.Stderr)
	if err != nil {
		log.Error().Err(err).Msg("proxyrotate: the crawl could not run")
	}
	os.Exit(code)
}

// run crawls from start through the proxies, checkpointed in the file
// ckpt, writes one JSON line per product to out and the report to rep,
// and returns the exit code. clk is the machine's clock (a test moves it
// on between runs).
func run(start string, proxies []string, ckpt string, clk clock.Clock, log zerolog.Logger, out, rep io.Writer) (int, error) {
	c := colly.NewCollector(colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})

	pool, err := proxy.New(proxy.Config{Proxies: proxies, Clock: clk, Logger: log})
	if err != nil {
		return 64, err // names the proxy that is wrong
	}
	c.SetProxyFunc(pool.ProxyFunc()) // in place of proxy.RoundRobinProxySwitcher, before Use

	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Require("ul.products")},
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}},
		},
	})
	if err != nil {
		return 64, err
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Logger: log, Clock: clk, Proxies: pool})
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
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) {
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
	report.New(o, report.Sources{Breaker: b, Validator: v, Records: perDomain, Proxies: pool}).Write(rep, report.Text)
	return o.State.ExitCode(), nil
}
