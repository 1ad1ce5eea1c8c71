package redis_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// A queued URL that redirects to a page already visited: Colly refuses
// the hop (AlreadyVisitedError) and there is nothing more to do for it.
// Its job is settled once, not parked to be claimed and refused again
// for ever.
func TestARedirectToAVisitedPageSettlesItsJob(t *testing.T) {
	_, ns := redistest.New(t)
	var toPage, redirects atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			redirects.Add(1)
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
			return
		}
		toPage.Add(1)
		w.Write([]byte("<html><body><h1>page</h1></body></html>"))
	}))
	defer srv.Close()
	cs := collyStorage(t, ns, redis.WithPollInterval(20*time.Millisecond))
	b, err := breaker.New(breaker.Standard())
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	if err := breakwater.Use(c, b, cs); err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(1, cs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/page", "/old"} {
		if err := q.AddURL(srv.URL + p); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- q.Run(c) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the crawl did not end in 10 s: /old redirected %d times (its job claimed again and again)", redirects.Load())
	}
	if toPage.Load() != 1 || redirects.Load() != 1 {
		t.Errorf("/page fetched %d times, /old %d; want once each", toPage.Load(), redirects.Load())
	}
	if st, _ := cs.Queue().Stats(context.Background()); st.Pending() != 0 || st.Dead != 0 {
		t.Errorf("after the crawl: %+v, want nothing pending or dead", st)
	}
}
