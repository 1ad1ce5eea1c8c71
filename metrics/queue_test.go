package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// redisDepth is the adapter a program writes to watch a crawl's queue in
// Redis.
func redisDepth(cs *redis.CollyStorage) metrics.QueueFunc {
	return func(ctx context.Context) (metrics.QueueDepth, error) {
		s, err := cs.Stats(ctx)
		return metrics.QueueDepth{Ready: s.Ready, Delayed: s.Delayed, InFlight: s.InFlight, Dead: s.Dead}, err
	}
}

// A real Redis queue and a real checkpoint file, read at scrape time.
func TestScrapeShowsQueueDepthAndDeadLetters(t *testing.T) {
	client, prefix := redistest.New(t)
	now := epoch
	q, err := redis.NewCollyStorage(client, "metrics", redis.WithNamespace(prefix), redis.WithMaxAttempts(1),
		redis.WithClock(clock.NewFake(now)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://a.example/3", "http://a.example/4", "http://a.example/5"} {
		if err := q.AddRequest([]byte(`{"URL":"` + u + `","Method":"GET"}`)); err != nil {
			t.Fatal(err)
		}
	}
	claim := func() *colly.Request { // as Colly's queue does
		t.Helper()
		b, err := q.GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ URL string }
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		return &colly.Request{URL: u, Method: "GET"}
	}
	if err := q.Fail(claim(), errors.New("503 three times")); err != nil { // dead
		t.Fatal(err)
	}
	if err := q.Park(claim(), now.Add(time.Hour)); err != nil { // delayed
		t.Fatal(err)
	}
	claim() // left in flight

	cp, err := bolt.Open(filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	recs := []storage.Record{
		{ID: 1, URL: "http://a.example/1", State: storage.Done, Attempts: 1},
		{ID: 2, URL: "http://a.example/2", State: storage.Done, Attempts: 1},
		{ID: 3, URL: "http://a.example/3", State: storage.Parked},
		{ID: 4, URL: "http://a.example/4", State: storage.Dead, Attempts: 3, LastError: "gone"},
		{ID: 5, URL: "http://a.example/5", State: storage.Pending},
	}
	if err := cp.Put(recs...); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WatchQueue("redis", redisDepth(q)); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchCheckpoint("crawl.db", cp); err != nil {
		t.Fatal(err)
	}
	s := scrape(t, serve(t, reg).URL())

	for state, want := range map[string]float64{"ready": 2, "delayed": 1, "in-flight": 1} {
		if got := s.value(t, "breakwater_queue_jobs", "queue", "redis", "state", state); got != want {
			t.Errorf("queue_jobs{state=%s} = %v, want %v", state, got, want)
		}
	}
	if got := s.value(t, "breakwater_queue_dead_letters", "queue", "redis"); got != 1 {
		t.Errorf("dead letters = %v, want 1", got)
	}
	if got := s.value(t, "breakwater_queue_up", "queue", "redis"); got != 1 {
		t.Errorf("queue_up = %v", got)
	}
	for state, want := range map[string]float64{"pending": 1, "in-flight": 0, "done": 2, "failed": 0, "parked": 1, "dead": 1} {
		if got := s.value(t, "breakwater_checkpoint_urls", "checkpoint", "crawl.db", "state", state); got != want {
			t.Errorf("checkpoint_urls{state=%s} = %v, want %v", state, got, want)
		}
	}
	if got := s.value(t, "breakwater_checkpoint_up", "checkpoint", "crawl.db"); got != 1 {
		t.Errorf("checkpoint_up = %v", got)
	}

	// Closed, the checkpoint cannot be read: up goes to 0, its counts
	// disappear, and the queue is still served.
	cp.Close()
	s = scrape(t, serve(t, reg).URL())
	if got := s.value(t, "breakwater_checkpoint_up", "checkpoint", "crawl.db"); got != 0 {
		t.Errorf("checkpoint_up after Close = %v, want 0", got)
	}
	if n := len(s.find("breakwater_checkpoint_urls", nil)); n != 0 {
		t.Errorf("%d checkpoint series from a closed store", n)
	}
	if got := s.value(t, "breakwater_queue_dead_letters", "queue", "redis"); got != 1 {
		t.Errorf("the queue should still be read")
	}
}

// A queue that cannot be read, or does not answer in time, costs the
// scrape neither its other series nor more than the read timeout, and is
// logged when a logger is given.
func TestAnUnreadableQueueIsDownNotFatal(t *testing.T) {
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.WithLogger(zerolog.New(&logs)), metrics.WithReadTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	unreachable := metrics.QueueFunc(func(ctx context.Context) (metrics.QueueDepth, error) {
		return metrics.QueueDepth{}, errors.New("redis unavailable: dial tcp 127.0.0.1:1: connection refused")
	})
	hung := metrics.QueueFunc(func(ctx context.Context) (metrics.QueueDepth, error) {
		<-ctx.Done() // a read that only the deadline ends
		return metrics.QueueDepth{}, ctx.Err()
	})
	fine := metrics.QueueFunc(func(ctx context.Context) (metrics.QueueDepth, error) {
		return metrics.QueueDepth{Ready: 7}, nil
	})
	for name, q := range map[string]metrics.Queue{"down": unreachable, "hung": hung, "fine": fine} {
		if err := m.WatchQueue(name, q); err != nil {
			t.Fatal(err)
		}
	}
	begin := time.Now()
	s := scrape(t, serve(t, reg).URL())
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("the scrape took %v; a hung queue must cost at most its read timeout", took)
	}
	for name, want := range map[string]float64{"down": 0, "hung": 0, "fine": 1} {
		if got := s.value(t, "breakwater_queue_up", "queue", name); got != want {
			t.Errorf("queue_up{queue=%s} = %v, want %v", name, got, want)
		}
	}
	if got := s.value(t, "breakwater_queue_jobs", "queue", "fine", "state", "ready"); got != 7 {
		t.Errorf("ready = %v", got)
	}
	if n := len(s.find("breakwater_queue_jobs", map[string]string{"queue": "down"})); n != 0 {
		t.Errorf("an unreadable queue exported %d depth series", n)
	}
	out := logs.String()
	if strings.Count(out, `"event":"metrics_read_failed"`) != 2 || !strings.Contains(out, "connection refused") ||
		!strings.Contains(out, "deadline exceeded") {
		t.Errorf("want one warning per failed read, with the cause:\n%s", out)
	}
}

func TestWatchingTwiceIsRefused(t *testing.T) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	q := metrics.QueueFunc(func(context.Context) (metrics.QueueDepth, error) { return metrics.QueueDepth{}, nil })
	if err := m.WatchQueue("q", q); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchQueue("q", q); !errors.Is(err, metrics.ErrAlreadyWatched) {
		t.Errorf("second WatchQueue(q) = %v, want ErrAlreadyWatched", err)
	}
	if err := m.WatchQueue("", q); err == nil {
		t.Error("a queue without a name was accepted")
	}
	b1, b2 := newBreaker(t), newBreaker(t)
	if err := m.Watch(b1); err != nil {
		t.Fatal(err)
	}
	if err := m.Watch(b1); err != nil {
		t.Errorf("watching the same breaker again: %v", err)
	}
	if err := m.Watch(b2); !errors.Is(err, metrics.ErrAlreadyWatched) {
		t.Errorf("a second breaker: %v, want ErrAlreadyWatched", err)
	}
	if err := m.Watch(nil); err == nil {
		t.Error("Watch(nil) accepted")
	}
}
