package main

import (
	"context"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// Three workers share one healthy crawl through a real Redis Cluster of
// three masters (redistest.NewCluster), given as -redis
// redis+cluster://seed,seed,seed: every product once across their files,
// every page fetched once, every worker complete, and every key of the
// crawl in one slot (its hash tag) on one master.
func TestRedisClusterWorkersShareAHealthyCrawl(t *testing.T) {
	c := redistest.NewCluster(t, 3)
	const id = "cluster-crawl"
	cfgs := make([]testserver.Config, fleetStores)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Products: fleetProducts, PerPage: fleetPerPage, Scenario: testserver.Scenario{Latency: fleetLatency}}
	}
	f := startFleet(t, cfgs...)
	args := append([]string{"--redis", c.URL(), "--crawl-id", id, "--report", "json", "--log-format", "json", "--status", "off",
		"--profiles", plainProfile(t), "--parallelism", itoa(fleetParallel)}, startURLs(f)...)
	rs := runWorkers(t, fleetWorkers, args...)
	for i, r := range rs {
		if r.code != 0 {
			t.Errorf("worker %d: exit %d, want 0 (complete)\nstdout:\n%s\nstderr:\n%.3000s", i, r.code, r.stdout, r.stderr)
		}
	}
	got := unionOnce(t, rs, f.Stores...)
	if want := fleetStores * fleetProducts; len(got) != want {
		t.Errorf("%d products in the files, want %d", len(got), want)
	}
	eachPageOnce(t, f.Stores...)
	q, err := redis.NewQueue(c.Client(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := q.Stats(context.Background()); err != nil || st.Pending() != 0 || st.Dead != 0 {
		t.Errorf("the crawl's queue after the run: %+v (%v), want nothing left", st, err)
	}
	slot := redistest.Slot(q.Keys()[0])
	owner := c.Owner(t, slot)
	for i := range c.Masters() {
		keys, err := c.Node(t, i).Keys(context.Background(), "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if i != owner || redistest.Slot(k) != slot {
				t.Errorf("key %s (slot %d) on master %d; want every key of the crawl in slot %d on master %d", k, redistest.Slot(k), i, slot, owner)
			}
		}
	}
}
