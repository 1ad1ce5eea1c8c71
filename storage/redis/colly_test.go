package redis_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	bwstorage "github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/gocolly/colly/v2/storage"
)

// collyStorage opens the crawl's Colly storage on a client of its own.
func collyStorage(t *testing.T, ns string, c redis.Config) *redis.CollyStorage {
	t.Helper()
	if c.Namespace == "" {
		c.Namespace = ns
	}
	cs, err := redis.NewCollyStorage(redistest.Client(t), "crawl-1", c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// idRecorder is Colly's in-memory storage, noting the IDs Colly asks about.
type idRecorder struct {
	storage.InMemoryStorage
	mu  sync.Mutex
	ids []uint64
}

func (r *idRecorder) IsVisited(id uint64) (bool, error) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
	return r.InMemoryStorage.IsVisited(id)
}

func TestRequestIDIsCollysOwn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	paths := []string{"/", "", "/a/./b", "/p?x=1&y=2", "/p?y=2&x=1", "/p#frag", "/sp ace", "/%7Euser", "/ü?q=ä", "/p?"}
	rec := &idRecorder{}
	c := colly.NewCollector()
	if err := c.SetStorage(rec); err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for _, p := range paths {
		u := srv.URL + p
		if err := c.Visit(u); err != nil && !errors.As(err, new(*colly.AlreadyVisitedError)) {
			t.Fatalf("Visit %q: %v", u, err)
		}
		want = append(want, redis.RequestID(u, nil))
	}
	body := map[string]string{"sku": "42", "qty": "1"}
	if err := c.Post(srv.URL+"/cart", body); err != nil {
		t.Fatal(err)
	}
	want = append(want, redis.RequestID(srv.URL+"/cart", []byte("qty=1&sku=42")))
	// And a request that went through Colly's queue: serialised, then Do.
	q, err := queue.New(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.AddURL(srv.URL + "/queued?b=2&a=1"); err != nil {
		t.Fatal(err)
	}
	if err := q.Run(c); err != nil {
		t.Fatal(err)
	}
	want = append(want, redis.RequestID(srv.URL+"/queued?b=2&a=1", nil))

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ids) != len(want) {
		t.Fatalf("Colly asked about %d IDs, want %d", len(rec.ids), len(want))
	}
	for i := range want {
		if rec.ids[i] != want[i] {
			t.Errorf("request %d: Colly's ID %016x, RequestID %016x", i, rec.ids[i], want[i])
		}
	}
	// The checkpoint hashes a request's URL as Colly left it, storage/redis
	// parses it again first: they agree when a second parse changes nothing.
	u, _, err := bwstorage.Identify(srv.URL+"/p?x=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, again, _ := bwstorage.Identify(u.String(), nil); again != redis.RequestID(srv.URL+"/p?x=1", nil) {
		t.Errorf("extensions/checkpoint and storage/redis disagree on a request's ID: %016x, %016x", again, redis.RequestID(srv.URL+"/p?x=1", nil))
	}
}

func TestIsVisitedClaimsEachRequestForOneWorkerOnly(t *testing.T) {
	_, ns := redistest.New(t)
	var workers []*redis.CollyStorage
	for range 3 {
		workers = append(workers, collyStorage(t, ns, redis.Config{}))
	}
	const ids = 50
	var fetch [ids]atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, w := range workers {
		for range 4 {
			wg.Go(func() {
				<-start
				for id := range ids {
					visited, err := w.IsVisited(uint64(id))
					if err != nil {
						t.Error(err)
						return
					}
					if visited {
						continue
					}
					// As Colly does: the request is made if Visited
					// agrees; its AlreadyVisitedError stops it.
					switch err := w.Visited(uint64(id)); {
					case err == nil:
						fetch[id].Add(1)
					case !errors.As(err, new(*colly.AlreadyVisitedError)):
						t.Error(err)
					}
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for id := range ids {
		if n := fetch[id].Load(); n != 1 {
			t.Errorf("request %d: %d of 12 callers went on to fetch it, want exactly 1", id, n)
		}
	}
}

// Two collectors on two storages visit the same URLs at once: the store
// sees each page once.
func TestTwoCollectorsFetchEachURLOnce(t *testing.T) {
	_, ns := redistest.New(t)
	store, err := testserver.Start(testserver.Config{Products: 60})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var wg sync.WaitGroup
	for range 2 {
		cs := collyStorage(t, ns, redis.Config{})
		c := colly.NewCollector(colly.Async(true))
		cs.Register(c)
		c.OnScraped(func(r *colly.Response) {
			if err := cs.Ack(r.Request); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			for i := 1; i <= 60; i++ {
				c.Visit(store.ProductURL(i))
			}
			c.Wait()
		})
	}
	wg.Wait()
	for i := 1; i <= 60; i++ {
		if n := store.CountPath(testserver.ProductPath(i)); n != 1 {
			t.Errorf("%s fetched %d times, want 1", testserver.ProductPath(i), n)
		}
	}
	// Done is for good: visiting again fetches nothing.
	cs := collyStorage(t, ns, redis.Config{})
	c := colly.NewCollector()
	cs.Register(c)
	for i := 1; i <= 60; i++ {
		c.Visit(store.ProductURL(i))
	}
	if n := store.Count(); n != 60 {
		t.Errorf("the store got %d requests after a third collector visited the done URLs, want 60", n)
	}
}

func TestAddRequestQueuesEachRequestOnce(t *testing.T) {
	_, ns := redistest.New(t)
	var workers []*redis.CollyStorage
	for range 3 {
		workers = append(workers, collyStorage(t, ns, redis.Config{}))
	}
	for _, w := range workers {
		q, err := queue.New(1, w)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := q.AddURL(fmt.Sprintf("http://shop.test/p/%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := workers[2].QueueSize(); err != nil || n != 10 {
		t.Fatalf("QueueSize = %d, %v; want 10 (three workers added the same 10 requests)", n, err)
	}
}

// newCrawlClock is a fake clock for the storage's queue, moved by hand.
func newCrawlClock() *clocktest.Fake { return newClock() }

func TestJobLifecycleThroughTheHooks(t *testing.T) {
	_, ns := redistest.New(t)
	clk := newCrawlClock()
	cs := collyStorage(t, ns, redis.Config{Clock: clk, VisibilityTimeout: time.Minute, BackoffBase: time.Second, BackoffCap: time.Second, MaxAttempts: 2})
	q, _ := queue.New(1, cs)
	for _, u := range []string{"http://shop.test/a", "http://shop.test/b", "http://shop.test/c"} {
		if err := q.AddURL(u); err != nil {
			t.Fatal(err)
		}
	}
	c := colly.NewCollector()
	get := func() *colly.Request {
		t.Helper()
		b, err := cs.GetRequest()
		if err != nil {
			t.Fatalf("GetRequest: %v", err)
		}
		r, err := c.UnmarshalRequest(b)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b, cc := get(), get(), get()
	if err := cs.Ack(a); err != nil {
		t.Fatal(err)
	}
	if err := cs.Fail(b, errors.New("HTTP 503")); err != nil {
		t.Fatal(err)
	}
	if err := cs.Park(cc, clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	st, _ := cs.Queue().Stats(context.Background())
	if st.Pending() != 2 || st.Delayed != 2 {
		t.Fatalf("after ack, fail, park: %+v; want 2 delayed (b's backoff, c parked)", st)
	}
	// a is done: adding it again queues nothing, and it counts as visited.
	if err := q.AddURL("http://shop.test/a"); err != nil {
		t.Fatal(err)
	}
	if v, err := cs.IsVisited(redis.RequestID("http://shop.test/a", nil)); err != nil || !v {
		t.Fatalf("IsVisited(a) = %v, %v after its Ack; want true", v, err)
	}
	clk.Advance(time.Second)
	b2 := get()
	if b2.URL.String() != "http://shop.test/b" {
		t.Fatalf("after the backoff got %s, want b", b2.URL)
	}
	if err := cs.Fail(b2, errors.New("HTTP 503 again")); err != nil {
		t.Fatal(err)
	}
	dead, _ := cs.Queue().Dead(context.Background(), 10)
	if len(dead) != 1 || dead[0].URL != "http://shop.test/b" || dead[0].LastError != "HTTP 503 again" {
		t.Fatalf("dead letters %v, want b with its last error", dead)
	}
	clk.Advance(time.Hour)
	if r := get(); r.URL.String() != "http://shop.test/c" {
		t.Fatalf("after the park got %s, want c", r.URL)
	}
}

// A worker that dies holding a job: after the visibility timeout another
// worker's GetRequest hands it out again.
func TestClaimedJobOfADeadWorkerComesBackAfterTheLease(t *testing.T) {
	_, ns := redistest.New(t)
	clk := newCrawlClock()
	opts := redis.Config{Clock: clk, VisibilityTimeout: 30 * time.Second, PollInterval: 5 * time.Millisecond}
	dead, alive := collyStorage(t, ns, opts), collyStorage(t, ns, opts)
	q, _ := queue.New(1, dead)
	if err := q.AddURL("http://shop.test/only"); err != nil {
		t.Fatal(err)
	}
	if _, err := dead.GetRequest(); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, err := alive.GetRequest() // waits: the only job is leased
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	select {
	case <-got:
		t.Fatal("the job was handed out again while its lease ran")
	case <-time.After(50 * time.Millisecond):
	}
	clk.Advance(30 * time.Second)
	select {
	case b := <-got:
		if !bytes.Contains(b, []byte("http://shop.test/only")) {
			t.Fatalf("got %s, want the dead worker's job", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job never came back after its lease")
	}
	if n, _ := alive.QueueSize(); n != 1 {
		t.Fatalf("QueueSize %d, want 1 (in flight at the live worker)", n)
	}
}

func TestGetRequestReportsADrainedQueue(t *testing.T) {
	_, ns := redistest.New(t)
	cs := collyStorage(t, ns, redis.Config{})
	if _, err := cs.GetRequest(); !errors.Is(err, redis.ErrDrained) {
		t.Fatalf("GetRequest on an empty crawl: %v, want ErrDrained", err)
	}
}

func TestCookiesAreSharedByWorkers(t *testing.T) {
	_, ns := redistest.New(t)
	a, b := collyStorage(t, ns, redis.Config{}), collyStorage(t, ns, redis.Config{})
	u, _ := url.Parse("http://shop.test:8080/cart")
	a.SetCookies(u, "session=abc")
	if got := b.Cookies(u); got != "session=abc" {
		t.Fatalf("the other worker reads cookies %q, want session=abc", got)
	}
	other, _ := url.Parse("http://other.test/")
	if got := b.Cookies(other); got != "" {
		t.Fatalf("another host's cookies: %q, want none", got)
	}
}

// A crawl on Colly's queue package with the storage, in one process: every
// product of the store once, and Run returns when the queue is drained.
func TestCollyQueueCrawlsToTheEnd(t *testing.T) {
	_, ns := redistest.New(t)
	store, err := testserver.Start(testserver.Config{Products: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cs := collyStorage(t, ns, redis.Config{PollInterval: 20 * time.Millisecond})
	c := colly.NewCollector()
	cs.Register(c)
	q, err := queue.New(3, cs)
	if err != nil {
		t.Fatal(err)
	}
	c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector+", "+testserver.RelatedSelector, func(e *colly.HTMLElement) {
		if err := q.AddURL(e.Request.AbsoluteURL(e.Attr("href"))); err != nil {
			t.Error(err)
		}
	})
	c.OnScraped(func(r *colly.Response) {
		if err := cs.Ack(r.Request); err != nil {
			t.Error(err)
		}
	})
	c.OnError(func(r *colly.Response, err error) { t.Errorf("%s: %v", r.Request.URL, err) })
	if err := q.AddURL(store.URL()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- q.Run(c) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the crawl did not end")
	}
	for i := 1; i <= 40; i++ {
		if n := store.CountPath(testserver.ProductPath(i)); n != 1 {
			t.Errorf("%s fetched %d times, want 1", testserver.ProductPath(i), n)
		}
	}
	if st, _ := cs.Queue().Stats(context.Background()); st.Pending() != 0 || st.Dead != 0 {
		t.Fatalf("after the crawl: %+v, want nothing pending or dead", st)
	}
}

// With a wait horizon, a crawl whose only work left is parked far ahead
// ends, and the parked job stays queued for the next run.
func TestWaitHorizonEndsACrawlWhoseRestIsParkedFarAhead(t *testing.T) {
	_, ns := redistest.New(t)
	clk := newCrawlClock()
	cs := collyStorage(t, ns, redis.Config{Clock: clk, WaitHorizon: time.Minute, PollInterval: 5 * time.Millisecond})
	q, _ := queue.New(1, cs)
	for _, u := range []string{"http://shop.test/near", "http://shop.test/far"} {
		if err := q.AddURL(u); err != nil {
			t.Fatal(err)
		}
	}
	c := colly.NewCollector()
	for _, until := range []time.Duration{30 * time.Second, 10 * time.Minute} {
		b, err := cs.GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		r, _ := c.UnmarshalRequest(b)
		if err := cs.Park(r, clk.Now().Add(until)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := cs.QueueSize(); err != nil || n != 1 {
		t.Fatalf("QueueSize = %d, %v; want 1 (the job parked 30s ahead, not the one 10m ahead)", n, err)
	}
	clk.Advance(30 * time.Second)
	b, err := cs.GetRequest()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := c.UnmarshalRequest(b)
	if err := cs.Ack(r); err != nil {
		t.Fatal(err)
	}
	if n, _ := cs.QueueSize(); n != 0 {
		t.Fatalf("QueueSize = %d with only a job parked 9.5m ahead, want 0", n)
	}
	if _, err := cs.GetRequest(); !errors.Is(err, redis.ErrDrained) {
		t.Fatalf("GetRequest: %v, want ErrDrained", err)
	}
	if st, _ := cs.Queue().Stats(context.Background()); st.Delayed != 1 {
		t.Fatalf("stats %+v: the far job must stay queued for the next run", st)
	}
}

// While Redis is unreachable the storage's calls wait and retry, for at
// most the max outage, and Close ends the wait at once.
func TestCollyStorageWaitsForRedisUpToTheMaxOutage(t *testing.T) {
	client := (&ownServer{port: portOf(t, closedPort(t))}).clientFor(t)
	cs, err := redis.NewCollyStorage(client, "crawl-1", redis.Config{MaxOutage: 300 * time.Millisecond, ReconnectBase: 20 * time.Millisecond, ReconnectCap: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := cs.QueueSize(); !errors.Is(err, redis.ErrUnavailable) {
		t.Fatalf("QueueSize with Redis down: %v, want ErrUnavailable", err)
	}
	if waited := time.Since(began); waited < 300*time.Millisecond {
		t.Fatalf("QueueSize gave up after %v, before the 300ms max outage", waited)
	}
	done := make(chan error, 1)
	go func() { done <- cs.AddRequest([]byte(`{"URL":"http://shop.test/a","Method":"GET"}`)) }()
	time.Sleep(50 * time.Millisecond)
	cs.Close()
	select {
	case err := <-done:
		if !errors.Is(err, redis.ErrUnavailable) {
			t.Fatalf("AddRequest ended by Close: %v, want its last error (ErrUnavailable)", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Close did not end AddRequest's wait")
	}
	if n, err := cs.QueueSize(); n != 0 || err != nil {
		t.Fatalf("QueueSize after Close = %d, %v; want 0, nil (Colly's Run ends)", n, err)
	}
}

// "if !c.HasVisited(u) { c.Visit(u) }" is how many Colly programs follow
// a link. HasVisited asks IsVisited alone: it must not leave a claim that
// makes the Visit after it refused, or the URL is fetched by no one.
func TestHasVisitedThenVisitFetchesTheURL(t *testing.T) {
	_, ns := redistest.New(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("<html><body>ok</body></html>"))
	}))
	defer srv.Close()
	c := colly.NewCollector()
	if err := c.SetStorage(collyStorage(t, ns, redis.Config{})); err != nil {
		t.Fatal(err)
	}
	u := srv.URL + "/page"
	visited, err := c.HasVisited(u)
	if err != nil || visited {
		t.Fatalf("HasVisited(new URL) = %v, %v", visited, err)
	}
	if err := c.Visit(u); err != nil {
		t.Fatalf("Visit after HasVisited: %v", err)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the server got %d requests for the page, want 1", n)
	}
	if visited, err := c.HasVisited(u); err != nil || !visited {
		t.Errorf("HasVisited after the visit = %v, %v; want visited", visited, err)
	}
	if err := c.Visit(u); !errors.As(err, new(*colly.AlreadyVisitedError)) {
		t.Errorf("a second Visit = %v; want AlreadyVisitedError", err)
	}
}
