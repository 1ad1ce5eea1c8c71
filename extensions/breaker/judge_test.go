package breaker_test

import (
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

func TestJudgeSaysTrippedUntilRefusedURLsAreDone(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 60, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk})
	c := colly.NewCollector(colly.AllowURLRevisit())
	b.Register(c)
	for i := 1; i <= 60; i++ {
		c.Visit(store.ProductURL(i))
	}
	o := outcome.Decide(-1, b)
	if o.State != outcome.Tripped || o.State.ExitCode() != 2 || len(o.Domains) != 1 || o.Domains[0] != store.Host() {
		t.Fatalf("outcome %+v, want tripped on %s", o, store.Host())
	}
	un := b.Unfinished().URLs
	failed := 0
	for _, u := range un {
		if strings.HasPrefix(u.Reason, "failed: degraded (HTTP 503") {
			failed++
		}
	}
	if len(un) != 30 || failed != 10 || un[0].Domain != store.Host() {
		t.Fatalf("%d unfinished URLs (%d failed), want the 10 that failed and the 20 refused", len(un), failed)
	}

	// The site recovers and the unfinished URLs are re-driven: nothing is
	// left unfinished, the circuit closed, the run complete.
	store.SetScenario(testserver.Scenario{})
	clk.Advance(breaker.Standard().Cooldown)
	for _, u := range un {
		c.Visit(u.URL)
	}
	o = outcome.Decide(-1, b)
	if o.State != outcome.Complete || len(b.Unfinished().URLs) != 0 {
		t.Fatalf("after re-driving: outcome %+v with %d unfinished, want complete", o, len(b.Unfinished().URLs))
	}
	if o.Records != 60 {
		t.Fatalf("records %d, want 60 successes counted when no validator judges", o.Records)
	}
}

func TestJudgeEmptyWhenNothingSucceeded(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 20, Scenario: testserver.Scenario{Mode: testserver.Gone}})
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard()})
	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 20; i++ {
		c.Visit(store.ProductURL(i))
	}
	if o := outcome.Decide(-1, b); o.State != outcome.Empty || o.State.ExitCode() != 3 {
		t.Fatalf("outcome %+v, want empty", o)
	}
}
