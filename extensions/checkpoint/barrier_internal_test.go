package checkpoint

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
)

// A page's done record is not written while a link Colly marked visited
// before it has not been recorded; it is once the link is.
func TestDoneWaitsForTheLinksFoundBeforeIt(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memory.New()
	cp, err := New(s, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	const page, link, later = 1, 2, 3
	if err := cp.Visited(link); err != nil { // found on the page
		t.Fatal(err)
	}
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: page, URL: "http://h/", State: storage.Done})
	cp.unlock()
	if _, ok, _ := s.Get(page); ok {
		t.Fatal("the page is done in the store before the link found on it is recorded")
	}
	if err := cp.Visited(later); err != nil { // found after the page was done: not waited for
		t.Fatal(err)
	}
	cp.mu.Lock()
	_ = cp.putLocked(storage.Record{ID: link, URL: "http://h/link", State: storage.Pending})
	cp.resolveLocked(link, false)
	cp.unlock()
	if r, ok, _ := s.Get(page); !ok || r.State != storage.Done {
		t.Fatalf("once the link is recorded the page must be done: %v %v", r.State, ok)
	}
	if cp.Stats().HeldDone != 1 {
		t.Errorf("stats %+v: want one done record held", cp.Stats())
	}
}

// A hop of a redirect chain is marked visited and never requested: after
// the grace period it stops holding records back.
func TestARedirectHopStopsHoldingAfterTheGracePeriod(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memory.New()
	cp, err := New(s, WithClock(clk), WithGrace(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_ = cp.Visited(10) // a hop
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: 1, URL: "http://h/a", State: storage.Done})
	cp.unlock()
	clk.Advance(2 * time.Second)
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: 2, URL: "http://h/b", State: storage.Done})
	cp.unlock()
	for _, id := range []uint64{1, 2} {
		if _, ok, _ := s.Get(id); !ok {
			t.Errorf("record %d still held after the grace period", id)
		}
	}
	if cp.Stats().GraceFreed != 1 {
		t.Errorf("stats %+v: want one announcement freed by the grace period", cp.Stats())
	}
	if v, _ := cp.IsVisited(10); !v {
		t.Errorf("the hop is no longer visited in this run")
	}
}
