package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// doneURLs reads the checkpoint file at path (no process holds it) and
// returns the URLs in state done, and the counts per state.
func doneURLs(t *testing.T, path string) (map[string]bool, map[storage.State]int) {
	t.Helper()
	s, err := bolt.Open(path, bolt.Config{Verify: true})
	if err != nil {
		t.Fatalf("the checkpoint left by a killed run does not open whole: %v", err)
	}
	defer s.Close()
	done := map[string]bool{}
	if err := s.Scan(func(r storage.Record) error { done[r.URL] = true; return nil }, storage.Done); err != nil {
		t.Fatal(err)
	}
	c, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	return done, c
}

// hits returns how many times each path of each store was requested.
func hits(stores []*testserver.Store) map[string]int {
	out := map[string]int{}
	for _, s := range stores {
		for _, h := range s.Requests() {
			out[s.URL()+h.Path]++
		}
	}
	return out
}

// The crawl is killed with SIGKILL at 20 or more random moments and
// resumed each time until it completes. Every product ends up in the
// JSON lines exactly once, none is missing, and no page the checkpoint
// held as done at a kill is ever requested again; the pages fetched more
// than once are those in flight, or done but not yet committed, at a kill.
func TestKilledAtRandomMomentsResumesToExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	const total, kills = 2000, 20
	var cfgs []testserver.Config
	for i := range 3 {
		n := total / 3
		if i == 0 {
			n += total % 3
		}
		cfgs = append(cfgs, testserver.Config{Products: n, PerPage: 50, Scenario: testserver.Scenario{Latency: 3 * time.Millisecond}})
	}
	fleet, err := testserver.StartFleet(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	stores := fleet.Stores
	dir := t.TempDir()
	args := []string{"--resume", "--report", "json", "--parallelism", "4", "--log-level", "warn"}
	for _, s := range stores {
		args = append(args, s.URL()+"/")
	}
	ckpt := filepath.Join(dir, "crawl.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	deadline := time.Now().Add(3 * time.Minute)

	killed, runs, exit := 0, 0, -1
	var doneAtKill map[string]bool // the checkpoint's done pages at the last kill
	var hitsAtKill map[string]int
	refetchedDone := 0
	for exit != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not complete after %d runs (%d killed)", runs, killed)
		}
		runs++
		cmd, stdout, stderr := crawlCmdIn(t, dir, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if killed < kills {
			// Anywhere from before the checkpoint is open to well into
			// the run: short enough that twenty kills land before the
			// crawl can finish (with up to 400 ms a run finished
			// after nine), long enough that most runs make progress.
			time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		} else {
			r := finish(t, cmd, err, stdout, stderr)
			exit = r.code
			if exit != 0 && exit != 2 {
				t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", runs, r.code, r.stdout, r.stderr)
			}
		}
		// No page done at the previous kill was requested in this run.
		now := hits(stores)
		for u := range doneAtKill {
			if now[u] != hitsAtKill[u] {
				refetchedDone++
				t.Errorf("%s was done in the checkpoint at a kill and was fetched again (%d → %d)", u, hitsAtKill[u], now[u])
			}
		}
		if _, err := os.Stat(ckpt); err == nil {
			doneAtKill, _ = doneURLs(t, ckpt)
		}
		hitsAtKill = now
	}
	if killed < kills {
		t.Fatalf("the crawl completed after %d kills; want at least %d (the kills come too late)", killed, kills)
	}

	// Every product exactly once (products fails on a URL written twice).
	ps := products(t, filepath.Join(dir, "products.jsonl"), stores...)
	got := urls(ps)
	missing := 0
	for _, s := range stores {
		for n := 1; n <= s.Catalog().Len(); n++ {
			if !got[s.ProductURL(n)] {
				missing++
			}
		}
	}
	if len(ps) != total || missing != 0 {
		t.Fatalf("%d lines, %d products missing; want all %d exactly once", len(ps), missing, total)
	}
	done, c := doneURLs(t, ckpt)
	if len(c) != 1 || c[storage.Done] != len(done) {
		t.Errorf("checkpoint at the end: %v, want every URL done", c)
	}
	refetched, extra := 0, 0
	for u, n := range hits(stores) {
		if n > 1 && strings.Contains(u, "/products/") {
			refetched++
			extra += n - 1
		}
	}
	// What a kill can cost: the pages in flight (4 per store) and those
	// done since the last commit (50 ms of crawling), each time.
	t.Logf("%d runs, %d killed: %d product pages fetched more than once (%d extra requests), all in flight or not yet committed at a kill; %d requests in all for %d pages",
		runs, killed, refetched, extra, fleet.Count(), len(done))
	if refetchedDone != 0 || extra > killed*60 {
		t.Errorf("%d extra product requests over %d kills: more than what was in flight at them", extra, killed)
	}
}

// ageCheckpoint moves every time the checkpoint at path waits for (the
// breakers' RetryAt, parked URLs' NotBefore) back by d: as if the process
// had been rescheduled d later. The test cannot wait out a real cooldown.
func ageCheckpoint(t *testing.T, path string, d time.Duration) {
	t.Helper()
	s, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	var recs []storage.Record
	err = s.Scan(func(r storage.Record) error {
		r.NotBefore = r.NotBefore.Add(-d)
		recs = append(recs, r)
		return nil
	}, storage.Parked)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) > 0 {
		if err := s.Put(recs...); err != nil {
			t.Fatal(err)
		}
	}
	b, ok, err := s.Meta("checkpoint/breakers")
	if err != nil || !ok {
		t.Fatalf("no breaker states saved in the checkpoint: %v %v", ok, err)
	}
	var saved map[string]map[string]any // every field kept; only retry_at moves
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	for _, v := range saved {
		if s, ok := v["retry_at"].(string); ok {
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatal(err)
			}
			v["retry_at"] = at.Add(-d)
		}
	}
	if b, err = json.Marshal(saved); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta("checkpoint/breakers", b); err != nil {
		t.Fatal(err)
	}
}

// A degrading store trips the crawl (exit 2), its URLs saved; resumed at
// once, its circuit is still open (a restart is not a way around a
// cooldown): nothing is sent to it, exit 2 again. Once the cooldown has
// passed and the store has recovered, --resume completes (exit 0) and
// fetches only what was not done.
func TestTripThenResumeFetchesOnlyWhatWasNotDone(t *testing.T) {
	const n = 120
	healthy := startStore(t, testserver.Config{Products: n, PerPage: n})
	sick := startStore(t, testserver.Config{Products: n, PerPage: n,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 40}})
	dir := t.TempDir()
	args := []string{"--resume", "--report", "json", "--log-level", "warn", healthy.URL() + "/", sick.URL() + "/"}

	r := runCrawlIn(t, dir, args...)
	if r.code != 2 {
		t.Fatalf("first run: exit %d, want 2 (tripped)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rep := r.report(t)
	if !rep.hasFinding("circuit_open", sick.Host()) || !rep.hasFinding("unfinished", sick.Host()) || rep.hasFinding("unfinished", healthy.Host()) {
		t.Errorf("first run's findings %+v: want the sick store open with URLs unfinished, the healthy one finished", rep.Outcome.Findings)
	}
	out := filepath.Join(dir, "products.jsonl")
	first := urls(products(t, out, healthy, sick))
	servedHealthy := healthyProducts(sick)
	if len(first) != n+len(servedHealthy) {
		t.Errorf("first run wrote %d products, want the healthy store's %d and the %d the sick one served before it degraded", len(first), n, len(servedHealthy))
	}
	sentFirst := sick.Count()

	// At once: still cooling down.
	r = runCrawlIn(t, dir, args...)
	if r.code != 2 || sick.Count() != sentFirst || !r.report(t).hasFinding("circuit_open", sick.Host()) {
		t.Fatalf("resumed within the cooldown: exit %d, %d requests to the sick store (was %d); want 2, none, its circuit open\nstderr:\n%s",
			r.code, sick.Count(), sentFirst, r.stderr)
	}

	// Later, the store healthy again.
	if err := sick.SetScenario(testserver.Scenario{}); err != nil {
		t.Fatal(err)
	}
	ageCheckpoint(t, filepath.Join(dir, "crawl.db"), time.Hour)
	before := map[string]int{}
	for i := 1; i <= n; i++ {
		before[testserver.ProductPath(i)] = sick.CountPath(testserver.ProductPath(i))
	}
	r = runCrawlIn(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("resumed after the cooldown: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	all := products(t, out, healthy, sick)
	if len(all) != 2*n {
		t.Errorf("%d products in the end, want %d", len(all), 2*n)
	}
	for i := 1; i <= n; i++ {
		p := testserver.ProductPath(i)
		if healthy.CountPath(p) != 1 {
			t.Errorf("healthy store: %s requested %d times, want once", p, healthy.CountPath(p))
		}
		again := sick.CountPath(p) - before[p]
		switch {
		case first[sick.ProductURL(i)] && again != 0:
			t.Errorf("%s was done before the trip and was fetched again", p)
		case !first[sick.ProductURL(i)] && again != 1:
			t.Errorf("%s was not done before the trip: fetched %d times on resume, want once", p, again)
		}
	}
	if got := sick.CountPath("/"); got != 1 {
		t.Errorf("the sick store's listing was requested %d times, want once (it was done before the trip)", got)
	}
}

// The refusals and faults that must be clear, and never cost a file.
func TestCheckpointFlagsRefuseWhatTheyMust(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 10, PerPage: 10})

	t.Run("existing checkpoint without --resume", func(t *testing.T) {
		dir := t.TempDir()
		if r := runCrawlIn(t, dir, store.URL()+"/"); r.code != 0 {
			t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
		}
		sum, _ := os.ReadFile(filepath.Join(dir, "crawl.db"))
		sent := store.Count()
		r := runCrawlIn(t, dir, store.URL()+"/")
		if r.code != 64 || !strings.Contains(r.stderr, "--resume") || !strings.Contains(r.stderr, "crawl.db") || store.Count() != sent {
			t.Errorf("exit %d, stderr %q: want 64 naming the file and --resume, nothing sent", r.code, r.stderr)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "crawl.db")); !bytes.Equal(sum, after) {
			t.Errorf("the refused run changed the checkpoint")
		}
		// --resume of a finished crawl: nothing to do, complete.
		r = runCrawlIn(t, dir, "--resume", "--report", "json", store.URL()+"/")
		if r.code != 0 || store.Count() != sent || r.report(t).Outcome.Records != 10 {
			t.Errorf("resume of a finished crawl: exit %d, %d requests (had %d), outcome %+v; want 0, none sent, the 10 records counted",
				r.code, store.Count(), sent, r.report(t).Outcome)
		}
	})

	t.Run("not a checkpoint", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "products.jsonl")
		content := []byte(`{"url":"http://x/"}` + "\n")
		os.WriteFile(path, content, 0o644)
		r := runCrawlIn(t, dir, "--resume", "--checkpoint", path, "--out", "other.jsonl", store.URL()+"/")
		if after, _ := os.ReadFile(path); r.code != 64 || !strings.Contains(r.stderr, path) || !bytes.Equal(after, content) {
			t.Errorf("exit %d, stderr %q: want 64 naming the file, the file untouched", r.code, r.stderr)
		}
	})

	t.Run("corrupt", func(t *testing.T) {
		dir := t.TempDir()
		if r := runCrawlIn(t, dir, store.URL()+"/"); r.code != 0 {
			t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
		}
		path := filepath.Join(dir, "crawl.db")
		b, _ := os.ReadFile(path)
		cut := 4096 + 100 // bbolt's first meta page and part of the second: truncated
		os.WriteFile(path, b[:cut], 0o644)
		r := runCrawlIn(t, dir, "--resume", store.URL()+"/")
		if after, _ := os.ReadFile(path); r.code != 1 || !strings.Contains(r.stderr, "crawl.db: checkpoint is corrupt") || !strings.Contains(r.stderr, "move it aside") || len(after) != cut {
			t.Errorf("exit %d, stderr %q: want 1 naming the file as corrupt, the file untouched", r.code, r.stderr)
		}
	})

	t.Run("locked by another process", func(t *testing.T) {
		slow := startStore(t, testserver.Config{Products: 200, PerPage: 200, Scenario: testserver.Scenario{Latency: 50 * time.Millisecond}})
		dir := t.TempDir()
		cmd, _, _ := crawlCmdIn(t, dir, "--parallelism", "1", slow.URL()+"/")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		for slow.Count() < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		start := time.Now()
		r := runCrawlIn(t, dir, "--resume", "--out", "second.jsonl", slow.URL()+"/")
		took := time.Since(start)
		if r.code != 1 || !strings.Contains(r.stderr, "locked") || !strings.Contains(r.stderr, "crawl.db") || took > 5*time.Second {
			t.Errorf("second process: exit %d after %v, stderr %q; want 1 within about a second, saying the checkpoint is locked", r.code, took, r.stderr)
		}
	})

	t.Run("dead letters", func(t *testing.T) {
		gone := startStore(t, testserver.Config{Products: 5, PerPage: 5, Scenario: testserver.Scenario{Mode: testserver.Gone, After: 3}})
		dir := t.TempDir()
		r := runCrawlIn(t, dir, gone.URL()+"/")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0: gone pages are finished, not retried\n%s", r.code, r.stderr)
		}
		r = runCrawlIn(t, dir, "--dead-letters")
		if r.code != 0 || !strings.Contains(r.stdout, "3 dead URLs") || !strings.Contains(r.stdout, "404") {
			t.Errorf("--dead-letters: exit %d\n%s\nwant 0 listing the 3 pages answered 404, with the status", r.code, r.stdout)
		}
		if r := runCrawlIn(t, t.TempDir(), "--dead-letters"); r.code != 64 || !strings.Contains(r.stderr, "no checkpoint") {
			t.Errorf("--dead-letters without a checkpoint: exit %d, %q; want 64", r.code, r.stderr)
		}
	})
	_ = fmt.Sprint
}
