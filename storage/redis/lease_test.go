package redis_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

func TestUnackedJobReturnsAfterTheVisibilityTimeout(t *testing.T) {
	const vis = 30 * time.Second
	f := newFixture(t, redis.Config{VisibilityTimeout: vis})
	enqueue(t, f.q, job("a"))
	other := f.queue(t, redistest.Client(t), f.crawl) // a second worker process

	dying := claim(t, f.q) // this worker never answers
	f.clock.Advance(vis - time.Millisecond)
	if e := claimEmpty(t, other); !e.Next.Equal(dying.LeaseUntil) {
		t.Errorf("before the timeout: next %v, want the lease deadline %v", e.Next, dying.LeaseUntil)
	}
	f.clock.Advance(time.Millisecond)
	got := claim(t, other)
	if got.ID != "a" || got.Attempts != 1 || !strings.Contains(got.LastError, "lease expired") {
		t.Fatalf("after the timeout: %s, last error %q; want the job back with one attempt spent", got, got.LastError)
	}
	for name, err := range map[string]error{
		"ack":    f.q.Ack(ctxT(t), dying),
		"fail":   f.q.Fail(ctxT(t), dying, errors.New("late")),
		"park":   f.q.Park(ctxT(t), dying, start),
		"extend": f.q.Extend(ctxT(t), dying),
	} {
		if !errors.Is(err, redis.ErrLeaseLost) {
			t.Errorf("late %s by the first worker: %v, want ErrLeaseLost", name, err)
		}
	}
	if err := other.Ack(ctxT(t), got); err != nil {
		t.Fatalf("the new holder's ack: %v", err)
	}
	if s := stats(t, f.q); s != (redis.Stats{}) {
		t.Errorf("stats %+v, want empty", s)
	}
}

func TestLateAckCompletesAJobNobodyHasReclaimed(t *testing.T) {
	f := newFixture(t, redis.Config{VisibilityTimeout: time.Minute})
	enqueue(t, f.q, job("a"))
	slow := claim(t, f.q)
	f.clock.Advance(2 * time.Minute)
	if n, err := f.q.Reclaim(ctxT(t)); err != nil || n != 1 {
		t.Fatalf("Reclaim = %d, %v; want 1", n, err)
	}
	if s := stats(t, f.q); s.Ready != 1 || s.InFlight != 0 {
		t.Fatalf("after reclaim: %+v", s)
	}
	if err := f.q.Ack(ctxT(t), slow); err != nil {
		t.Fatalf("late ack with nobody else holding the job: %v", err)
	}
	if s := stats(t, f.q); s != (redis.Stats{}) {
		t.Errorf("after the late ack: %+v, want empty", s)
	}
	if err := f.q.Ack(ctxT(t), slow); !errors.Is(err, redis.ErrNotClaimed) {
		t.Errorf("second ack of the same claim: %v, want ErrNotClaimed", err)
	}
}

func TestLateAckIsRefusedOnceTheJobWasRescheduled(t *testing.T) {
	f := newFixture(t, redis.Config{VisibilityTimeout: time.Minute})
	enqueue(t, f.q, job("a"))
	slow := claim(t, f.q)
	f.clock.Advance(time.Minute)
	// Taken back and claimed by another worker, which fails it.
	other := claim(t, f.q)
	if err := f.q.Fail(ctxT(t), other, errors.New("503")); err != nil {
		t.Fatal(err)
	}
	if err := f.q.Ack(ctxT(t), slow); !errors.Is(err, redis.ErrLeaseLost) {
		t.Errorf("late ack after the job was rescheduled: %v, want ErrLeaseLost", err)
	}
	if s := stats(t, f.q); s.Delayed+s.Ready != 1 {
		t.Errorf("the rescheduled job was touched: %+v", s)
	}
}

func TestAckOfAnAckedJobIsUnknown(t *testing.T) {
	f := newFixture(t, redis.Config{})
	enqueue(t, f.q, job("a"))
	j := claim(t, f.q)
	copyOfClaim := *j
	if err := f.q.Ack(ctxT(t), j); err != nil {
		t.Fatal(err)
	}
	if err := f.q.Ack(ctxT(t), &copyOfClaim); !errors.Is(err, redis.ErrUnknownJob) {
		t.Errorf("ack again: %v, want ErrUnknownJob", err)
	}
	// The same ID enqueued again is a new job: the old claim cannot ack it.
	enqueue(t, f.q, job("a"))
	if err := f.q.Ack(ctxT(t), &copyOfClaim); !errors.Is(err, redis.ErrLeaseLost) {
		t.Errorf("stale ack of a re-enqueued ID: %v, want ErrLeaseLost", err)
	}
	if s := stats(t, f.q); s.Ready != 1 {
		t.Errorf("the re-enqueued job was touched: %+v", s)
	}
	if err := f.q.Ack(ctxT(t), job("never-claimed")); !errors.Is(err, redis.ErrNotClaimed) {
		t.Errorf("ack of an unclaimed job: %v, want ErrNotClaimed", err)
	}
}

func TestExtendKeepsTheLease(t *testing.T) {
	const vis = 10 * time.Second
	f := newFixture(t, redis.Config{VisibilityTimeout: vis})
	enqueue(t, f.q, job("long"))
	j := claim(t, f.q)
	for range 3 {
		f.clock.Advance(vis - time.Second)
		if err := f.q.Extend(ctxT(t), j); err != nil {
			t.Fatal(err)
		}
		if want := f.clock.Now().Add(vis); !j.LeaseUntil.Equal(want) {
			t.Errorf("LeaseUntil %v, want %v", j.LeaseUntil, want)
		}
		if n, err := f.q.Reclaim(ctxT(t)); err != nil || n != 0 {
			t.Fatalf("Reclaim of an extended lease = %d, %v", n, err)
		}
	}
	if err := f.q.Ack(ctxT(t), j); err != nil {
		t.Fatal(err)
	}
}

func TestJobThatKeepsKillingWorkersEndsDead(t *testing.T) {
	const vis = time.Second
	f := newFixture(t, redis.Config{VisibilityTimeout: vis})
	j := job("poison")
	j.MaxAttempts = 2
	enqueue(t, f.q, j)
	claim(t, f.q)
	f.clock.Advance(vis)
	claim(t, f.q) // taken back once, claimed again, and its worker dies again
	f.clock.Advance(vis)
	if e := claimEmpty(t, f.q); !e.Drained() {
		t.Errorf("poison job still pending: next %v", e.Next)
	}
	dead, err := f.q.Dead(ctxT(t), 1)
	if err != nil || len(dead) != 1 || dead[0].Attempts != 2 || !strings.Contains(dead[0].LastError, "lease expired") {
		t.Fatalf("dead letters %v, %v; want the poison job with its lease error", dead, err)
	}
}

func TestReclaimTakesBackEveryExpiredLease(t *testing.T) {
	f := newFixture(t, redis.Config{VisibilityTimeout: time.Second})
	batch := make([]*redis.Job, 250) // more than one reclaim batch
	for i := range batch {
		batch[i] = &redis.Job{URL: "https://shop.example/x"}
	}
	enqueue(t, f.q, batch...)
	for range batch {
		claim(t, f.q)
	}
	f.clock.Advance(time.Second)
	if n, err := f.q.Reclaim(ctxT(t)); err != nil || n != len(batch) {
		t.Fatalf("Reclaim = %d, %v; want %d", n, err, len(batch))
	}
	if s := stats(t, f.q); s.Ready != int64(len(batch)) {
		t.Errorf("stats %+v", s)
	}
}
