package testserver

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// client is a plain net/http client; its timeout only bounds a broken test.
var client = &http.Client{Timeout: 10 * time.Second}

// start starts a store for the test and closes it at the end.
func start(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// get fetches url and returns status, header and the whole body.
func get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, body
}

// waitCount waits (bounded) until the store has received n requests.
func waitCount(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.Count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("store received %d requests, want %d", s.Count(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
