package redis_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
)

// TestFailSpreadsRetriesAcrossEachWindow fails 2,000 jobs five times each,
// all at the same instant per round (10,000 failures through Redis), and
// checks each round's retry times fill that round's window evenly, are
// stored as the jobs' eligible times, and never move in lock-step.
func TestFailSpreadsRetriesAcrossEachWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 failures through Redis")
	}
	const jobs, rounds, bins = 2000, 5, 10
	base, cap := time.Second, 8*time.Second
	f := newFixture(t, redis.Config{BackoffBase: base, BackoffCap: cap, MaxAttempts: rounds + 1})
	batch := make([]*redis.Job, jobs)
	for i := range batch {
		batch[i] = job(fmt.Sprintf("j%04d", i))
	}
	enqueue(t, f.q, batch...)
	for round := 1; round <= rounds; round++ {
		window := min(cap, base<<(round-1))
		now := f.clock.Now()
		var hist [bins]int
		distinct := map[time.Time]bool{}
		claimed := make([]*redis.Job, jobs)
		for i := range claimed {
			claimed[i] = claim(t, f.q)
		}
		for _, j := range claimed {
			if err := f.q.Fail(ctxT(t), j, fmt.Errorf("round %d: 503", round)); err != nil {
				t.Fatal(err)
			}
			if j.Attempts != round || j.LastError != fmt.Sprintf("round %d: 503", round) {
				t.Fatalf("after failure %d: %s, last error %q", round, j, j.LastError)
			}
			d := j.NotBefore.Sub(now)
			if d < 0 || d >= window {
				t.Fatalf("round %d: retry in %v, outside [0, %v)", round, d, window)
			}
			hist[int(int64(d)*bins/int64(window))]++
			distinct[j.NotBefore] = true
		}
		// The stored eligible times are the ones the jobs were given.
		stored, err := f.client.ZRangeWithScores(ctxT(t), f.q.Keys()[1], 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, z := range stored {
			if !distinct[time.UnixMilli(int64(z.Score))] {
				t.Fatalf("round %d: %v delayed until %v, a time no Fail returned", round, z.Member, time.UnixMilli(int64(z.Score)))
			}
		}
		exp := float64(jobs) / bins
		chi := 0.0
		for _, o := range hist {
			chi += (float64(o) - exp) * (float64(o) - exp) / exp
		}
		if chi > 27.9 { // 9 degrees of freedom, p = 0.001
			t.Errorf("round %d: chi-square %.1f: retries not spread evenly over %v: %v", round, chi, window, hist)
		}
		// Uniform draws into window/1ms slots collide now and then: expect
		// slots·(1-e^(-jobs/slots)) distinct times. Lock-step gives a handful.
		slots := float64(window / time.Millisecond)
		if want := 0.95 * slots * (1 - math.Exp(-jobs/slots)); float64(len(distinct)) < want {
			t.Errorf("round %d: %d distinct retry times for %d jobs, want ≥ %.0f", round, len(distinct), jobs, want)
		}
		t.Logf("round %d: window %v, histogram %v, chi-square %.1f, %d distinct", round, window, hist, chi, len(distinct))
		f.clock.Advance(cap)
	}
}
