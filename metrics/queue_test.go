package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// A queue's depth and a real checkpoint file, read at scrape time. (The
// Redis queue's counts as a queue are checked where both modules meet:
// examples/productcrawl's TestTheMetricsQueueIsTheRedisQueuesDepth.)
func TestScrapeShowsQueueDepthAndDeadLetters(t *testing.T) {
	var reads atomic.Int64
	depth := func(ctx context.Context) (metrics.QueueDepth, error) {
		reads.Add(1)
		return metrics.QueueDepth{Ready: 2, Delayed: 1, InFlight: 1, Dead: 1}, nil
	}

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
	if err := m.WatchQueue("redis", depth); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchCheckpoint("crawl.db", cp.Counts); err != nil {
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
	if reads.Load() == 0 {
		t.Error("the scrape did not read the queue")
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
	m, err := metrics.New(reg, metrics.Config{Logger: zerolog.New(&logs), ReadTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	unreachable := func(ctx context.Context) (metrics.QueueDepth, error) {
		return metrics.QueueDepth{}, errors.New("redis unavailable: dial tcp 127.0.0.1:1: connection refused")
	}
	hung := func(ctx context.Context) (metrics.QueueDepth, error) {
		<-ctx.Done() // a read that only the deadline ends
		return metrics.QueueDepth{}, ctx.Err()
	}
	fine := func(ctx context.Context) (metrics.QueueDepth, error) {
		return metrics.QueueDepth{Ready: 7}, nil
	}
	for name, q := range map[string]func(context.Context) (metrics.QueueDepth, error){"down": unreachable, "hung": hung, "fine": fine} {
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
	q := func(context.Context) (metrics.QueueDepth, error) { return metrics.QueueDepth{}, nil }
	if err := m.WatchQueue("q", q); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchQueue("q", q); !errors.Is(err, metrics.ErrAlreadyWatched) {
		t.Errorf("second WatchQueue(q) = %v, want ErrAlreadyWatched", err)
	}
	if err := m.WatchQueue("", q); err == nil {
		t.Error("a queue without a name was accepted")
	}
	b1, b2 := newBreaker(t, breaker.Config{}), newBreaker(t, breaker.Config{})
	if err := m.Observe(b1); err != nil {
		t.Fatal(err)
	}
	if err := m.Observe(b1); err != nil {
		t.Errorf("watching the same breaker again: %v", err)
	}
	if err := m.Observe(b2); !errors.Is(err, metrics.ErrAlreadyWatched) {
		t.Errorf("a second breaker: %v, want ErrAlreadyWatched", err)
	}
	if err := m.Observe(nil); err == nil {
		t.Error("Observe(nil) accepted")
	}
}
