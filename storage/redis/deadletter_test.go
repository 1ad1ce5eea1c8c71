package redis_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
)

func TestJobDeadLettersWithItsLastErrorAfterMaxAttempts(t *testing.T) {
	f := newFixture(t, redis.Config{BackoffBase: time.Second, BackoffCap: time.Second})
	j := job("doomed")
	j.MaxAttempts = 3
	enqueue(t, f.q, j)
	for i := 1; i <= 3; i++ {
		c := claim(t, f.q)
		if err := f.q.Fail(ctxT(t), c, fmt.Errorf("attempt %d: HTTP 503", i)); err != nil {
			t.Fatal(err)
		}
		if got := c.Exhausted(); got != (i == 3) {
			t.Fatalf("after failure %d: Exhausted() = %v", i, got)
		}
		f.clock.Advance(time.Second)
	}
	if s := stats(t, f.q); s != (redis.Stats{Dead: 1}) {
		t.Errorf("stats %+v, want one dead letter and nothing pending", s)
	}
	if e := claimEmpty(t, f.q); !e.Drained() {
		t.Errorf("a dead letter is still claimable or pending: next %v", e.Next)
	}
	dead, err := f.q.Dead(ctxT(t), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dead))
	}
	d := dead[0]
	wantDied := start.Add(2 * time.Second)
	if d.ID != "doomed" || d.Attempts != 3 || d.LastError != "attempt 3: HTTP 503" || !d.FailedAt.Equal(wantDied) {
		t.Errorf("dead letter %s, last error %q, failed at %v; want 3 attempts, the third error, died at %v", d, d.LastError, d.FailedAt, wantDied)
	}
}

func TestRetryDeadGivesAFreshSetOfAttempts(t *testing.T) {
	f := newFixture(t, redis.Config{})
	j := job("d")
	j.MaxAttempts = 1
	enqueue(t, f.q, j)
	if err := f.q.Fail(ctxT(t), claim(t, f.q), errors.New("HTTP 410")); err != nil {
		t.Fatal(err)
	}
	if n, err := f.q.Enqueue(ctxT(t), job("d")); n != 0 || err != nil {
		t.Errorf("enqueue over a dead letter = %d, %v; want skipped", n, err)
	}
	if err := f.q.RetryDead(ctxT(t), "d"); err != nil {
		t.Fatal(err)
	}
	if err := f.q.RetryDead(ctxT(t), "d"); !errors.Is(err, redis.ErrUnknownJob) {
		t.Errorf("second RetryDead: %v, want ErrUnknownJob", err)
	}
	again := claim(t, f.q)
	if again.Attempts != 0 || again.LastError != "HTTP 410" {
		t.Errorf("retried: %s, last error %q", again, again.LastError)
	}
}

func TestDeadLetterLimitDropsTheOldest(t *testing.T) {
	f := newFixture(t, redis.Config{DeadLetterLimit: 2})
	for i := range 3 {
		j := job(fmt.Sprintf("d%d", i))
		j.MaxAttempts = 1
		enqueue(t, f.q, j)
		if err := f.q.Fail(ctxT(t), claim(t, f.q), errors.New("gone")); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Millisecond)
	}
	dead, err := f.q.Dead(ctxT(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 2 || dead[0].ID != "d2" || dead[1].ID != "d1" {
		t.Fatalf("dead letters %v, want d2, d1 (newest first, d0 dropped)", dead)
	}
	if n, err := f.client.HLen(ctxT(t), f.q.Keys()[4]).Result(); err != nil || n != 2 {
		t.Errorf("jobs hash holds %d records, %v; want the dropped one's record gone too", n, err)
	}
}
