package redis_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
)

func TestTwoCrawlsOnOneRedisAreIsolated(t *testing.T) {
	f := newFixture(t, redis.Config{})
	a := f.q
	b := f.queue(t, f.client, "crawl-2")
	own := job("shared-id")
	own.MaxAttempts = 7
	enqueue(t, a, own)
	enqueue(t, b, job("shared-id"), job("only-b")) // same ID, other crawl: new

	if s := stats(t, a); s.Ready != 1 {
		t.Errorf("crawl A: %+v", s)
	}
	if s := stats(t, b); s.Ready != 2 {
		t.Errorf("crawl B: %+v", s)
	}
	ja := claim(t, a)
	if ja.MaxAttempts != 7 {
		t.Errorf("crawl A got %s", ja)
	}
	claimEmpty(t, a)
	if err := b.Ack(ctxT(t), ja); !errors.Is(err, redis.ErrUnknownJob) && !errors.Is(err, redis.ErrLeaseLost) {
		t.Errorf("crawl B acking crawl A's claim: %v, want refused", err)
	}
	for range 2 {
		if j := claim(t, b); j.MaxAttempts != redis.DefaultMaxAttempts {
			t.Errorf("crawl B got %s", j)
		}
	}
	for i, k := range a.Keys() {
		if strings.Contains(k, "crawl-2") || !strings.Contains(k, ":{crawl-1}:q:") || b.Keys()[i] == k {
			t.Errorf("key %q of crawl A is not namespaced by its hash tag", k)
		}
	}
}

func TestEveryKeyCarriesTheRetentionTTL(t *testing.T) {
	const retention = 48 * time.Hour
	f := newFixture(t, redis.Config{Retention: retention, VisibilityTimeout: time.Second})
	later := job("later")
	later.NotBefore = start.Add(time.Hour)
	dies := job("dies")
	dies.MaxAttempts = 1
	enqueue(t, f.q, dies, later, job("waits"), job("runs"))
	if err := f.q.Fail(ctxT(t), claim(t, f.q), errors.New("x")); err != nil { // "dies" is first: ids break the tie
		t.Fatal(err)
	}
	claim(t, f.q) // "runs" in flight
	for _, k := range f.q.Keys() {
		ttl, err := f.client.PTTL(ctxT(t), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > retention {
			t.Errorf("key %s: TTL %v, want in (0, %v]", k, ttl, retention)
		}
	}
}

func TestNewQueueRejectsBadConfiguration(t *testing.T) {
	f := newFixture(t, redis.Config{})
	for name, tc := range map[string]struct {
		crawl string
		opt   redis.Config
	}{
		"empty crawl id":      {"", redis.Config{}},
		"brace in crawl id":   {"a}b", redis.Config{}},
		"glob in crawl id":    {"a*", redis.Config{}},
		"space in namespace":  {"c", redis.Config{Namespace: "my ns"}},
		"negative visibility": {"c", redis.Config{VisibilityTimeout: -time.Second}},
		"negative attempts":   {"c", redis.Config{MaxAttempts: -1}},
		"cap below base":      {"c", redis.Config{BackoffBase: time.Minute, BackoffCap: time.Second}},
		"retention too short": {"c", redis.Config{Retention: time.Millisecond}},
		"tiny poll interval":  {"c", redis.Config{PollInterval: time.Microsecond}},
		"nil rand":            {"c", redis.WithRand(redis.Config{}, nil)},
	} {
		_, err := redis.NewQueue(f.client, tc.crawl, tc.opt)
		if !errors.Is(err, redis.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := redis.NewQueue(nil, "c", redis.Config{}); !errors.Is(err, redis.ErrInvalidConfig) {
		t.Errorf("nil client: %v", err)
	}
}
