package redis_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/rs/zerolog"
)

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) events(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func TestQueueLogsOneEventPerDecisionItTakesAlone(t *testing.T) {
	var buf logBuffer
	f := newFixture(t, redis.Config{Logger: zerolog.New(&buf), VisibilityTimeout: time.Second})
	j := job("a")
	j.MaxAttempts = 1
	enqueue(t, f.q, j, job("b"))
	if err := f.q.Fail(ctxT(t), claim(t, f.q), errors.New("HTTP 500")); err != nil {
		t.Fatal(err)
	}
	claim(t, f.q) // b's worker dies
	f.clock.Advance(time.Second)
	if _, err := f.q.Reclaim(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ev := buf.events(t)
	if len(ev) != 2 {
		t.Fatalf("%d log events, want 2 (dead letter, reclaim): %v", len(ev), ev)
	}
	if ev[0]["message"] != "job dead-lettered: attempts exhausted" || ev[0]["domain"] != "shop.example" || ev[0]["error"] != "HTTP 500" || ev[0]["crawl"] != f.crawl {
		t.Errorf("dead-letter event: %v", ev[0])
	}
	if !strings.HasPrefix(ev[1]["message"].(string), "leases expired") || ev[1]["reclaimed"] != 1.0 {
		t.Errorf("reclaim event: %v", ev[1])
	}
}
