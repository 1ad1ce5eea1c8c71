package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/gocolly/colly/v2"
)

// The crawl's queue for the metrics is a real Redis queue's counts: what
// queue_jobs and queue_dead_letters show for -redis. (The metrics module
// checks that a queue's depth reaches the scrape; it does not depend on
// storage/redis, so the Redis half of that check lives here, beside the
// adapter it tests.)
func TestTheMetricsQueueIsTheRedisQueuesDepth(t *testing.T) {
	client, prefix := redistest.New(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	q, err := redis.NewCollyStorage(client, "metrics", redis.Config{Namespace: prefix, MaxAttempts: 1, Clock: clocktest.NewFake(now)})
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

	sh := &shared{cs: q}
	got, err := sh.depth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (metrics.QueueDepth{Ready: 2, Delayed: 1, InFlight: 1, Dead: 1}); got != want {
		t.Errorf("depth = %+v, want %+v", got, want)
	}
}
