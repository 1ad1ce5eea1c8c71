package main

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"

	bw "github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// client is one of the crawlers compared. Every one is the same Colly
// collector (async, same timeout, same page callback); they differ only in
// what is wired around it.
type client int

const (
	plain      client = iota // Colly alone: the reference
	retry                    // Colly + the usual retry loop
	gob                      // Colly + sony/gobreaker per host + the retry loop
	breakwater               // Colly + Breakwater + the retry loop on degraded outcomes
	dropin                   // the retry client's collector + Breakwater added, nothing else changed
)

var clients = []client{plain, retry, gob, breakwater, dropin}

func (k client) String() string {
	return [...]string{"plain", "retry", "gobreaker", "breakwater", "drop-in"}[k]
}

// bw reports whether k runs Breakwater: the recommended wiring or the
// drop-in. Their rows carry the goals.
func (k client) bw() bool { return k == breakwater || k == dropin }

// parallelism is every client's requests in flight per store: Colly's
// LimitRule for the baselines and the drop-in, Breakwater's per-domain
// pacing for the recommended wiring.
const parallelism = 2

// maxRetries is the retry loop's budget per URL.
const maxRetries = 5

// limits says how a baseline's LimitRules are laid out.
type limits int

const (
	// shared is Colly's usual LimitRule{DomainGlob: "*", Parallelism: 2}:
	// one pool of 2 slots shared by every host.
	shared limits = iota
	// perHost is one LimitRule of Parallelism 2 per store host, so every
	// client has the same requests in flight; the overhead scenario uses
	// it to compare the cost per page, not the slot layout.
	perHost
)

// wiring is what a client added to the collector, for the run to read
// back at the end.
type wiring struct {
	loop *retryLoop
	gob  *perHostGobreaker
	b    *breaker.Breaker
	v    *validate.Validator
	cp   *checkpoint.Checkpoint // the embedded checkpoint, where the scenario uses it
	// cpStore is the file under cp.
	cpStore storage.Store
	// cpDone is how many URLs the checkpoint held done when it closed.
	cpDone int
}

// wire builds client k onto c. save is the user's page callback: it is
// called for every product page whose title was found (and, for
// Breakwater, whose verdict is valid).
//
// tr is the transport the run gave the collector: Breakwater's adaptive
// timeout wraps it (breaker.Config.BaseTransport), since Colly cannot tell
// anyone which transport it has.
func wire(c *colly.Collector, k client, spec *crawlSpec, loop *retryLoop, save func(*colly.Request), log zerolog.Logger, tr http.RoundTripper) (*wiring, error) {
	w := &wiring{}
	if k != breakwater {
		if err := limitRules(c, spec); err != nil {
			return nil, err
		}
	}
	switch k {
	case plain:
	case retry:
		w.loop = loop
		c.OnError(func(r *colly.Response, _ error) { loop.retry(r.Request) })
	case gob:
		w.loop = loop
		w.gob = newPerHostGobreaker()
		w.gob.Register(c)
		c.OnError(func(r *colly.Response, _ error) { loop.retry(r.Request) })
	case breakwater:
		return w, wireBreakwater(c, w, spec, loop, save, log, tr)
	case dropin:
		if err := wireDropIn(c, w, log); err != nil {
			return nil, err
		}
		w.loop = loop
		c.OnError(func(r *colly.Response, _ error) { loop.retry(r.Request) })
	}
	c.OnHTML(testserver.TitleSelector, func(e *colly.HTMLElement) { save(e.Request) })
	return w, nil
}

// wireBreakwater is the user's code of the README: a validator with the
// store's selector, the standard breaker with per-domain pacing of 2 in
// place of Colly's shared LimitRule, the embedded checkpoint where the
// scenario asks for it, and the same retry loop, asked only for outcomes
// the breaker classed degraded (a 429 Breakwater re-sends itself; a refusal
// is not a failure; a consent shell is not an error).
func wireBreakwater(c *colly.Collector, w *wiring, spec *crawlSpec, loop *retryLoop, save func(*colly.Request), log zerolog.Logger, tr http.RoundTripper) error {
	v, err := validate.New(validate.Config{Checks: []validate.Check{validate.Require(testserver.TitleSelector)}, Logger: log})
	if err != nil {
		return fmt.Errorf("validator: %w", err)
	}
	w.loop, w.v = loop, v
	bcfg := breaker.Config{Profile: breaker.Standard(), Validator: v, Pacing: breaker.Pacing{Parallelism: parallelism}, BaseTransport: tr, Logger: log, OnAttempt: func(a observe.Attempt) {
		if a.Result.Class == circuit.Degraded {
			loop.retry(a.Request)
		}
	}}
	if spec.checkpoint != "" {
		if w.cpStore, err = bolt.Open(spec.checkpoint, bolt.Config{Logger: log}); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if w.cp, err = checkpoint.New(w.cpStore, checkpoint.Config{Logger: log}); err != nil {
			w.close()
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	b, err := breaker.New(bcfg)
	if err != nil {
		w.close()
		return fmt.Errorf("breaker: %w", err)
	}
	w.b = b
	exts := []bw.Extension{v, b}
	if w.cp != nil {
		exts = append(exts, w.cp)
	}
	if err := bw.Use(c, exts...); err != nil {
		w.close()
		return fmt.Errorf("wiring: %w", err)
	}
	c.OnHTML(testserver.TitleSelector, func(e *colly.HTMLElement) {
		if verdict, ok := v.VerdictOf(e.Response); ok && verdict.Valid() {
			save(e.Request)
		}
	})
	return nil
}

// wireDropIn is Breakwater added to an existing scraper as the README's
// Usage section adds it, with nothing else changed: the collector keeps
// its LimitRule (the shared one of the baselines), its transport (no
// Config.BaseTransport: Register wraps the one it has), its page callback and
// its plain OnError → Retry() loop; the validator and breaker.Standard() are
// registered with breakwater.Use, with no pacing and no checkpoint.
func wireDropIn(c *colly.Collector, w *wiring, log zerolog.Logger) error {
	v, err := validate.New(validate.Config{Checks: []validate.Check{validate.Require(testserver.TitleSelector)}, Logger: log})
	if err != nil {
		return fmt.Errorf("validator: %w", err)
	}
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), Validator: v, Logger: log})
	if err != nil {
		return fmt.Errorf("breaker: %w", err)
	}
	w.v, w.b = v, b
	return bw.Use(c, v, b)
}

// close closes what the client opened: the checkpoint and its file,
// after the collector's Wait.
func (w *wiring) close() error {
	var err error
	if w.cp != nil {
		if n, err := w.cp.Counts(); err == nil {
			w.cpDone = n[storage.Done]
		}
		err = w.cp.Close()
		w.cp = nil
	}
	if w.cpStore != nil {
		err = errors.Join(err, w.cpStore.Close())
		w.cpStore = nil
	}
	return err
}

func limitRules(c *colly.Collector, spec *crawlSpec) error {
	if spec.limits == shared {
		return c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: parallelism})
	}
	for _, h := range spec.hosts {
		rule := &colly.LimitRule{DomainRegexp: "^" + regexp.QuoteMeta(h) + "$", Parallelism: parallelism}
		if err := c.Limit(rule); err != nil {
			return fmt.Errorf("limit rule for %s: %w", h, err)
		}
	}
	return nil
}
