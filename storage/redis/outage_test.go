package redis_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// Redis stops in the middle of a crawl and comes back a second later: the
// workers pause (nothing is acked while it is gone), then finish the crawl
// with every page done exactly once. Each worker's breaker store and Colly
// storage log the outage as one event going down and one coming back.
func TestCrawlPausesWhileRedisIsDownAndCompletes(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	t.Parallel() // a long test of its own keys or server: overlap it with the others
	const domains, products, workers, parallelism = 6, 50, 3, 3
	srv := startOwnServer(t)
	client := srv.client()
	paced := testserver.Scenario{Mode: testserver.Healthy, Latency: 5 * time.Millisecond}
	f := fleet(t, domains, products, paced, paced)
	var ev events
	logs := make([]*logBuffer, workers)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for w := range logs {
		logs[w] = &logBuffer{}
	}
	wait := runWorkers(ctx, workers, workerConfig{
		Addr: srv.addr(), Namespace: "outage", Crawl: "shop",
		Seeds: productSeeds(f, products), Parallelism: parallelism, Visibility: 20 * time.Second,
		Cooldown: time.Minute, Poll: 20 * time.Millisecond,
	}, &ev, func(w int) io.Writer { return logs[w] })
	for ev.count("done", nil) < domains*products/3 {
		if ctx.Err() != nil {
			t.Fatal("the crawl never got a third of the way")
		}
		time.Sleep(2 * time.Millisecond)
	}
	srv.stop()
	stopped := time.Now()
	time.Sleep(time.Second)
	restarted := time.Now()
	srv.start()
	noErrors(t, wait())
	if ctx.Err() != nil {
		t.Fatal("the crawl did not end within 90s")
	}
	checkEveryProductOnce(t, f, products, client, inspect(t, client, "outage", redis.Config{}), 0)

	// While Redis is down no request gets past the breaker (it fails
	// closed) and no job is claimed: only the requests already sent when it
	// went may finish then. Judged by event order, not by a grace period
	// (on a loaded machine a page sent just before the stop can end well
	// after it): every outcome during the outage is of a request that
	// started before Redis was gone, at most one per worker's slot.
	lastStart := map[string]time.Time{}
	during := 0
	for _, e := range ev.list() {
		key := e.Worker + " " + e.URL
		switch {
		case e.Ev == "start":
			lastStart[key] = e.At
		case e.Ev == "done" && e.At.After(stopped) && e.At.Before(restarted):
			during++
			if !lastStart[key].Before(stopped) {
				t.Errorf("%s: %s was started at %s and fetched while Redis was down (%s to %s)", e.Worker, e.URL,
					lastStart[key].Format("15:04:05.000"), stopped.Format("15:04:05.000"), restarted.Format("15:04:05.000"))
			}
		}
	}
	if during > workers*parallelism {
		t.Errorf("%d outcomes while Redis was down, more than the %d requests that can be in flight", during, workers*parallelism)
	}
	// One outage is one event each way. A go-redis client whose pool failed
	// PoolSize dials in a row fails new dials fast with the last error and
	// probes once a second (its own dial breaker), so a worker may see Redis
	// come back, then a refused dial, then back again: a real change, logged
	// as such; never one event per call. A worker whose breaker was not asked
	// anything during the outage (its requests all waiting on the queue)
	// never saw it there, and one whose breaker was asked nothing after it
	// (the other workers drained the queue) never saw Redis come back: its
	// recovery is logged on its next good call.
	breakerSaw := 0
	for w, l := range logs {
		got := map[string]int{}
		for _, e := range l.events(t) {
			if ev, _ := e["event"].(string); ev == "redis_unavailable" || ev == "redis_recovered" {
				got[e["component"].(string)+" "+ev]++
			}
		}
		for _, c := range []string{"breaker", "colly storage"} {
			down, up := got[c+" redis_unavailable"], got[c+" redis_recovered"]
			least, unseen := 1, 0
			if c == "breaker" {
				least, unseen = 0, 1
				breakerSaw += down
			}
			if down < least || down > 2 || up > down || up < down-unseen {
				t.Errorf("worker %d: %s logged %d redis_unavailable and %d redis_recovered events, want one each (two at most)", w, c, down, up)
			}
		}
		t.Logf("worker %d outage events: %v", w, got)
	}
	if breakerSaw == 0 {
		t.Error("no worker's breaker store noticed the outage")
	}
	var last time.Time
	for _, e := range ev.list() {
		if e.Ev == "done" && e.At.After(last) {
			last = e.At
		}
	}
	t.Logf("Redis down for %v at %d of %d pages; the crawl finished %v after it came back; refused while down: %d; in flight at the stop and ended during it: %d",
		restarted.Sub(stopped).Round(time.Millisecond), domains*products/3, domains*products,
		last.Sub(restarted).Round(time.Millisecond), ev.count("refused", nil), during)
}
