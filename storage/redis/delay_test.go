package redis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
)

func TestDelayedJobIsNotClaimableBeforeItsTime(t *testing.T) {
	f := newFixture(t, redis.Config{})
	j := job("later")
	j.NotBefore = start.Add(10 * time.Second)
	enqueue(t, f.q, j)

	e := claimEmpty(t, f.q)
	if !e.Next.Equal(j.NotBefore) || e.Drained() {
		t.Errorf("empty claim says next at %v (drained %v), want %v", e.Next, e.Drained(), j.NotBefore)
	}
	if s := stats(t, f.q); s.Delayed != 1 || s.Ready != 0 {
		t.Errorf("stats %+v, want 1 delayed", s)
	}
	f.clock.Advance(10*time.Second - time.Millisecond)
	claimEmpty(t, f.q)
	if s := stats(t, f.q); s.Delayed != 1 {
		t.Errorf("1 ms early: stats %+v, want still delayed", s)
	}
	f.clock.Advance(time.Millisecond)
	if s := stats(t, f.q); s.Ready != 1 || s.Delayed != 0 {
		t.Errorf("due: stats %+v, want it counted ready", s)
	}
	if got := claim(t, f.q); got.ID != "later" {
		t.Errorf("claimed %s", got.ID)
	}
}

func TestEmptyQueueSaysDrained(t *testing.T) {
	f := newFixture(t, redis.Config{})
	e := claimEmpty(t, f.q)
	if !e.Drained() || !errors.Is(e, redis.ErrEmpty) {
		t.Errorf("empty queue: %v, drained %v", e, e.Drained())
	}
	enqueue(t, f.q, job("a"))
	j := claim(t, f.q)
	if e := claimEmpty(t, f.q); !e.Next.Equal(j.LeaseUntil) {
		t.Errorf("with a job in flight, next = %v, want its lease deadline %v", e.Next, j.LeaseUntil)
	}
}

func TestParkWaitsWithoutSpendingAnAttempt(t *testing.T) {
	f := newFixture(t, redis.Config{})
	enqueue(t, f.q, job("a"))
	j := claim(t, f.q)
	reopens := start.Add(2 * time.Minute)
	if err := f.q.Park(ctxT(t), j, reopens); err != nil {
		t.Fatal(err)
	}
	if j.Attempts != 0 || !j.NotBefore.Equal(reopens) {
		t.Errorf("after Park: attempts %d, not before %v", j.Attempts, j.NotBefore)
	}
	f.clock.Advance(2*time.Minute - time.Millisecond)
	claimEmpty(t, f.q)
	f.clock.Advance(time.Millisecond)
	again := claim(t, f.q)
	if again.ID != "a" || again.Attempts != 0 || again.LastError != "" {
		t.Errorf("after the park: %s, last error %q", again, again.LastError)
	}
	if err := f.q.Park(ctxT(t), again, start); err != nil { // a time already past: ready at once
		t.Fatal(err)
	}
	if s := stats(t, f.q); s.Ready != 1 {
		t.Errorf("parked until the past: %+v, want ready", s)
	}
}
