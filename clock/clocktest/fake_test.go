package clocktest_test

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

func TestFakeAfterFiresOnlyWhenDue(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := clocktest.NewFake(start)
	ch := f.After(10 * time.Second)
	f.Advance(9 * time.Second)
	select {
	case <-ch:
		t.Fatal("fired 1s early")
	default:
	}
	f.Advance(time.Second)
	select {
	case got := <-ch:
		if !got.Equal(start.Add(10 * time.Second)) {
			t.Fatalf("fired with %v, want %v", got, start.Add(10*time.Second))
		}
	default:
		t.Fatal("did not fire when due")
	}
	if f.Waiters() != 0 {
		t.Fatalf("waiters = %d after firing, want 0", f.Waiters())
	}
}

func TestFakeBlockUntilSeesWaiters(t *testing.T) {
	f := clocktest.NewFake(time.Unix(0, 0))
	done := make(chan struct{})
	go func() { <-f.After(time.Minute); close(done) }()
	if !f.BlockUntil(1, 5*time.Second) {
		t.Fatal("BlockUntil never saw the waiter")
	}
	f.Advance(time.Minute)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not released")
	}
	if _, ok := f.NextDeadline(); ok {
		t.Fatal("NextDeadline reports a waiter after all fired")
	}
}

func TestFakeSetNeverGoesBackwards(t *testing.T) {
	f := clocktest.NewFake(time.Unix(100, 0))
	f.Set(time.Unix(50, 0))
	if got := f.Now(); !got.Equal(time.Unix(100, 0)) {
		t.Fatalf("Now = %v after Set to the past, want unchanged", got)
	}
}

func TestFakeDriveLetsSleepersThrough(t *testing.T) {
	f := clocktest.NewFake(time.Unix(0, 0))
	stop := make(chan struct{})
	defer close(stop)
	go f.Drive(stop)
	for i := 1; i <= 3; i++ {
		select {
		case got := <-f.After(time.Hour):
			if want := time.Unix(0, 0).Add(time.Duration(i) * time.Hour); !got.Equal(want) {
				t.Fatalf("woke at %v, want %v", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Drive did not move the clock to the waiter's deadline")
		}
	}
}
