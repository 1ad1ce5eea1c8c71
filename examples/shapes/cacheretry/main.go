// Command cacheretry is a Colly scraper with an on-disk cache (CacheDir)
// and a retry loop of its own: a page that failed the way a retry can fix
// (what breaker.Classify calls degraded: 5xx, timeouts, cut bodies) is
// dropped from the cache and retried, up to three attempts counted in its
// Ctx. Breakwater is added as the README's Usage adds it.
//
//	go run ./shapes/cacheretry https://shop.example/ > products.jsonl
package main

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/circuit"
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

// maxAttempts is how many times a page is asked for before it is left.
const maxAttempts = 3

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cacheretry START_URL > products.jsonl")
		os.Exit(outcome.Usage)
	}
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel)
	code, err := run(os.Args[1], "crawl.db", "cache", clock.System, log, os.Stdout, os.Stderr)
	if err != nil {
		log.Error().Err(err).Msg("cacheretry: the crawl could not run")
	}
	os.Exit(code)
}

// run crawls from start, checkpointed in the file ckpt and cached in the
// folder cacheDir, writes one JSON line per product to out and the report
// to rep, and returns the exit code. clk is the machine's clock (a test
// moves it on between runs).
func run(start, ckpt, cacheDir string, clk clock.Clock, log zerolog.Logger, out, rep io.Writer) (int, error) {
	c := colly.NewCollector(colly.Async(true), colly.CacheDir(cacheDir))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})

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

	var mu sync.Mutex
	enc := json.NewEncoder(out)
	var records int64
	perDomain := map[string]int64{}
	c.OnRequest(func(r *colly.Request) {
		if r.Ctx.Get("attempt") == "" {
			r.Ctx.Put("attempt", "1")
		}
	})
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(map[string]string{"url": e.Request.URL.String(), "title": e.ChildText("h1.title")})
		records++
		perDomain[e.Request.URL.Host]++
	})
	// c.Visit, not e.Request.Visit: each page gets a Ctx of its own, so
	// its own attempt count.
	c.OnHTML("a.product-link, a.next", func(e *colly.HTMLElement) {
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if err := c.Visit(u); err != nil {
			b.NotVisited(u, err)
		}
	})
	c.OnError(func(r *colly.Response, err error) {
		if breaker.Classify(r.StatusCode, err) != circuit.Degraded {
			return // a refusal, a 429, a 404, an invalid page: no retry of ours
		}
		n, _ := strconv.Atoi(r.Request.Ctx.Get("attempt"))
		if n >= maxAttempts {
			return
		}
		r.Request.Ctx.Put("attempt", strconv.Itoa(n+1))
		// Never answer the retry from a cached copy of the failure.
		if err := os.Remove(cacheFile(cacheDir, r.Request.URL.String())); err != nil && !os.IsNotExist(err) {
			log.Warn().Err(err).Msg("cacheretry: a cached page could not be removed")
		}
		if err := r.Request.Retry(); err != nil {
			b.NotVisited(r.Request.URL.String(), err)
		}
	})

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

// cacheFile is where Colly's CacheDir keeps the answer to a GET of u: the
// hex SHA-1 of the URL, in a folder named by its first two digits.
func cacheFile(cacheDir, u string) string {
	sum := sha1.Sum([]byte(u))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(cacheDir, h[:2], h)
}
