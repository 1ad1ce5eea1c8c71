package redis_test

import (
	"context"
	"errors"
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
	cs := collyStorage(t, ns, redis.Config{PollInterval: 20 * time.Millisecond})
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
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
		// Ready jobs are in the order of their eligible time, in ms; two
		// added in the same ms go in the order of their IDs. /page first:
		// visited before /old redirects to it.
		time.Sleep(2 * time.Millisecond)
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

// A queued URL that redirects to a page whose job this worker has
// claimed but not started: Colly's queue claims the next job while its
// threads are busy, so /page is held, waiting for the thread /old's
// redirect runs in. The hop fetches /page; /page's own request must not
// fetch it again, and the hop's outcome settles /page's job.
func TestARedirectToAPageThisWorkerHoldsFetchesItOnce(t *testing.T) {
	_, ns := redistest.New(t)
	var cs *redis.CollyStorage
	var toPage, redirects atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			redirects.Add(1)
			// Redirect once the queue has claimed /page too.
			page := redis.RequestID("http://"+r.Host+"/page", nil)
			for deadline := time.Now().Add(5 * time.Second); !cs.Holds(page) && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
			return
		}
		toPage.Add(1)
		w.Write([]byte("<html><body><h1>page</h1></body></html>"))
	}))
	defer srv.Close()
	cs = collyStorage(t, ns, redis.Config{PollInterval: 20 * time.Millisecond})
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
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
	for _, p := range []string{"/old", "/page"} {
		if err := q.AddURL(srv.URL + p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // /old first (see above)
	}
	done := make(chan error, 1)
	go func() { done <- q.Run(c) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the crawl did not end in 10 s: /page fetched %d times, /old %d", toPage.Load(), redirects.Load())
	}
	if toPage.Load() != 1 || redirects.Load() != 1 {
		t.Errorf("/page fetched %d times, /old %d; want once each", toPage.Load(), redirects.Load())
	}
	if st, _ := cs.Queue().Stats(context.Background()); st.Pending() != 0 || st.Dead != 0 {
		t.Errorf("after the crawl: %+v, want nothing pending or dead", st)
	}
}

// The visited check of a URL whose job this worker holds lets one caller
// through: whichever of the job's own request and a redirect's hop meets
// it first. The later ones are told it is visited, or, told it was new at
// the same moment, lose at Visited.
func TestAHeldJobsURLIsLetThroughOnce(t *testing.T) {
	_, ns := redistest.New(t)
	cs := collyStorage(t, ns)
	const u = "http://shop.test/page"
	q, _ := queue.New(1, cs)
	if err := q.AddURL(u); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetRequest(); err != nil {
		t.Fatal(err)
	}
	id := redis.RequestID(u, nil)
	// A redirect's hop and the job's own request, both told "new".
	for i := range 2 {
		if v, err := cs.IsVisited(id); err != nil || v {
			t.Fatalf("IsVisited #%d = %v, %v before anyone took the job up; want false", i+1, v, err)
		}
	}
	if err := cs.Visited(id); err != nil {
		t.Fatalf("the first Visited: %v", err)
	}
	if err := cs.Visited(id); !errors.As(err, new(*colly.AlreadyVisitedError)) {
		t.Errorf("the second Visited = %v; want an AlreadyVisitedError", err)
	}
	// Anyone after: the URL is being fetched.
	if v, err := cs.IsVisited(id); err != nil || !v {
		t.Errorf("IsVisited after the job was taken up = %v, %v; want true", v, err)
	}
}
