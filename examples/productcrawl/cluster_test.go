package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// Three workers share one healthy crawl through a real Redis Cluster of
// three masters (redistest.NewCluster), given as -redis
// redis+cluster://seed,seed,seed: every product once across their files,
// every page fetched once, every worker complete, and every key of the
// crawl in one slot (its hash tag) on one master.
//
// With -redis-shards 3 the same crawl is spread over three slots, one on
// each master.
func TestRedisClusterWorkersShareAHealthyCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	for _, shards := range []int{1, 3} {
		t.Run("shards="+itoa(shards), func(t *testing.T) { testClusterCrawl(t, shards) })
	}
}

func testClusterCrawl(t *testing.T, shards int) {
	c := redistest.NewCluster(t, 3)
	const id = "cluster-crawl"
	cfgs := make([]testserver.Config, fleetStores)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Products: fleetProducts, PerPage: fleetPerPage, Scenario: testserver.Scenario{Latency: fleetLatency}}
	}
	f := startFleet(t, cfgs...)
	args := append([]string{"--redis", c.URL(), "--crawl-id", id, "--report", "json", "--log-format", "json", "--status", "off",
		"--profiles", plainProfile(t), "--parallelism", itoa(fleetParallel), "--redis-shards", itoa(shards)}, startURLs(f)...)
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
	cs, err := redis.NewCollyStorage(c.Client(t), id, redis.Config{Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if st, err := cs.Stats(context.Background()); err != nil || st.Pending() != 0 || st.Dead != 0 {
		t.Errorf("the crawl's queue after the run: %+v (%v), want nothing left", st, err)
	}
	slots := map[int]bool{} // the crawl's hash tags: its own, or one per shard
	for i := range c.Masters() {
		keys, err := c.Node(t, i).Keys(context.Background(), "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if tag, _, ok := strings.Cut(k[strings.Index(k, "{")+1:], "}"); ok && (tag == id || strings.HasPrefix(tag, id+"/")) {
				slots[redistest.Slot("{"+tag+"}")] = true
			}
		}
	}
	owners := map[int]bool{}
	for i := range c.Masters() {
		keys, err := c.Node(t, i).Keys(context.Background(), "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			s := redistest.Slot(k)
			if !slots[s] || c.Owner(t, s) != i {
				t.Errorf("key %s (slot %d) on master %d; want every key of the crawl in one of its slots %v, on its owner", k, s, i, slots)
			}
			owners[i] = true
		}
	}
	if len(slots) != shards || len(owners) != shards {
		t.Errorf("the crawl's keys are in %d slots on %d masters, want %d of each", len(slots), len(owners), shards)
	}
}

// Three workers crawl through a 3-master cluster while the crawl's slot
// moves to another master, key by key, once a third of the pages are
// fetched: the workers meet ASK, TRYAGAIN and MOVED and carry on. Every
// worker ends complete (exit 0), every product is in exactly one file,
// every page was fetched once, and nothing is left in the crawl.
func TestRedisClusterCrawlCarriesOnWhileItsSlotMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	c := redistest.NewCluster(t, 3)
	const id = "moving-crawl"
	const stores, perStore = 5, 60
	cfgs := make([]testserver.Config, stores)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Products: perStore, PerPage: fleetPerPage, Scenario: testserver.Scenario{Latency: 100 * time.Millisecond}}
	}
	f := startFleet(t, cfgs...)
	args := append([]string{"--redis", c.URL(), "--crawl-id", id, "--report", "json", "--log-format", "json", "--status", "off",
		"--profiles", plainProfile(t), "--parallelism", itoa(fleetParallel)}, startURLs(f)...)
	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr *bytes.Buffer
	}
	var procs []proc
	for range fleetWorkers {
		cmd, stdout, stderr := crawlCmd(t, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, proc{cmd, stdout, stderr})
	}
	cs, err := redis.NewCollyStorage(c.Client(t), id, redis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	slot := redistest.Slot("{" + id + "}") // the slot of every key of the unsharded crawl
	from := c.Owner(t, slot)
	deadline := time.Now().Add(60 * time.Second)
	for f.Count() < stores*perStore/3 {
		if time.Now().After(deadline) {
			t.Fatalf("a third of the pages not fetched within 60 s (%d)", f.Count())
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := f.Count()
	moved := c.MigrateSlot(t, slot, (from+1)%c.Masters(), func(int) { time.Sleep(5 * time.Millisecond) })
	during := f.Count() - before
	var rs []result
	for _, p := range procs {
		err := p.cmd.Wait()
		rs = append(rs, finish(t, p.cmd, err, p.stdout, p.stderr))
	}
	t.Logf("slot %d moved from master %d to %d (%d keys) after %d requests; %d requests were answered while it moved", slot, from, (from+1)%c.Masters(), moved, before, during)
	for i, r := range rs {
		if r.code != 0 {
			t.Errorf("worker %d: exit %d, want 0 (complete)\nstdout:\n%s\nstderr:\n%.3000s", i, r.code, r.stdout, r.stderr)
		}
	}
	got := unionOnce(t, rs, f.Stores...)
	if want := stores * perStore; len(got) != want {
		t.Errorf("%d products in the files, want %d", len(got), want)
	}
	eachPageOnce(t, f.Stores...)
	if st, err := cs.Stats(context.Background()); err != nil || st.Pending() != 0 || st.Dead != 0 {
		t.Errorf("the crawl's queue after the run: %+v (%v), want nothing left", st, err)
	}
}
