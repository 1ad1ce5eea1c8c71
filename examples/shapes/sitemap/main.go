// Command sitemap scrapes the products a shop's XML sitemap lists: OnXML
// reads each url/loc and visits it. Breakwater is added as the README's
// Usage adds it, with a validation rule for the sitemap itself.
//
//	go run ./shapes/sitemap https://shop.example/sitemap.xml > products.jsonl
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sitemap SITEMAP_URL > products.jsonl")
		os.Exit(outcome.Usage)
	}
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel)
	code, err := run(os.Args[1], "crawl.db", clock.System, log, os.Stdout, os.Stderr)
	if err != nil {
		log.Error().Err(err).Msg("sitemap: the crawl could not run")
	}
	os.Exit(code)
}

// run crawls the sitemap at start, checkpointed in the file ckpt, writes
// one JSON line per product to out and the report to rep, and returns the
// exit code. clk is the machine's clock (a test moves it on between runs).
func run(start, ckpt string, clk clock.Clock, log zerolog.Logger, out, rep io.Writer) (int, error) {
	c := colly.NewCollector(colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})

	// Product pages as in the Usage; every other page is the sitemap,
	// which must be a urlset (a consent shell or an error page is not).
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.MinBytes(0), validate.Body("urlset", func(r *colly.Response) error {
			if !bytes.Contains(r.Body, []byte("<urlset")) {
				return errors.New("no <urlset>: not a sitemap")
			}
			return nil
		})},
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

	var mu sync.Mutex
	enc := json.NewEncoder(out)
	var records int64
	perDomain := map[string]int64{}
	c.OnXML("//urlset/url/loc", func(e *colly.XMLElement) {
		u := strings.TrimSpace(e.Text)
		if err := e.Request.Visit(u); err != nil {
			b.NotVisited(e.Request.AbsoluteURL(u), err)
		}
	})
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(map[string]string{"url": e.Request.URL.String(), "title": e.ChildText("h1.title")})
		records++
		perDomain[e.Request.URL.Host]++
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
