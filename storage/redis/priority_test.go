package redis_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
)

func TestCriticalJobJumpsABulkBacklog(t *testing.T) {
	f := newFixture(t)
	backlog := make([]*redis.Job, 1000)
	for i := range backlog {
		backlog[i] = job(fmt.Sprintf("bulk%04d", i), redis.Bulk)
	}
	enqueue(t, f.q, backlog...)
	f.clock.Advance(10 * time.Minute)
	enqueue(t, f.q, job("normal", redis.Normal))
	enqueue(t, f.q, job("critical", redis.Critical))

	if j := claim(t, f.q); j.ID != "critical" {
		t.Fatalf("first claim %s, want the critical job ahead of 1000 bulk jobs", j.ID)
	}
	if j := claim(t, f.q); j.ID != "normal" {
		t.Fatalf("second claim %s, want the normal job (bulk is only 10 minutes old)", j.ID)
	}
	if j := claim(t, f.q); j.Lane != redis.Bulk {
		t.Fatalf("third claim %s, want the bulk backlog", j)
	}
}

func TestBulkJobIsClaimableAtOnceWhenAlone(t *testing.T) {
	// The seed's single ZSET scored eligible+offset makes a bulk job wait out
	// its offset even on an idle queue. Here the offset only orders.
	f := newFixture(t)
	enqueue(t, f.q, job("bulk", redis.Bulk))
	if j := claim(t, f.q); j.ID != "bulk" {
		t.Fatalf("claimed %s", j.ID)
	}
}

func TestAgingLetsOldJobsBeatFresherHigherLanes(t *testing.T) {
	const lead, bound = 2 * time.Hour, 30 * time.Minute
	for _, tc := range []struct {
		name     string
		old, new redis.Lane
		waited   time.Duration
		wantOld  bool
	}{
		{"bulk older than the aging bound beats fresh normal", redis.Bulk, redis.Normal, bound + time.Millisecond, true},
		{"bulk younger than the aging bound loses to fresh normal", redis.Bulk, redis.Normal, bound - time.Millisecond, false},
		{"normal older than the critical lead beats fresh critical", redis.Normal, redis.Critical, lead + time.Millisecond, true},
		{"normal younger than the critical lead loses to fresh critical", redis.Normal, redis.Critical, lead - time.Millisecond, false},
		{"bulk older than lead plus bound beats fresh critical", redis.Bulk, redis.Critical, lead + bound + time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, redis.WithAging(lead, bound))
			enqueue(t, f.q, job("old", tc.old))
			f.clock.Advance(tc.waited)
			enqueue(t, f.q, job("new", tc.new))
			want := "new"
			if tc.wantOld {
				want = "old"
			}
			if j := claim(t, f.q); j.ID != want {
				t.Errorf("claimed %s first, want %s", j.ID, want)
			}
		})
	}
}

func TestJobsOfOneLaneComeOutOldestFirst(t *testing.T) {
	f := newFixture(t)
	for i := range 20 {
		enqueue(t, f.q, job(fmt.Sprintf("z%02d", 19-i), redis.Normal)) // IDs sort opposite to age
		f.clock.Advance(time.Millisecond)
	}
	for i := range 20 {
		if j := claim(t, f.q); j.ID != fmt.Sprintf("z%02d", 19-i) {
			t.Fatalf("claim %d gave %s, want z%02d", i, j.ID, 19-i)
		}
	}
}

func TestDelayedJobKeepsItsSeniorityWhenPromoted(t *testing.T) {
	// A normal job due at t+1m, promoted only by a claim at t+10m, must still
	// beat a normal job enqueued at t+5m: priority counts from eligibility,
	// not from promotion.
	f := newFixture(t)
	early := job("due-at-1m", redis.Normal)
	early.NotBefore = start.Add(time.Minute)
	enqueue(t, f.q, early)
	f.clock.Advance(5 * time.Minute)
	enqueue(t, f.q, job("enqueued-at-5m", redis.Normal))
	f.clock.Advance(5 * time.Minute)
	if j := claim(t, f.q); j.ID != "due-at-1m" {
		t.Errorf("claimed %s, want due-at-1m", j.ID)
	}
}
