package checkpoint

import (
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
)

// A page's done record is not written while a link Colly marked visited
// before it has not been recorded; it is once the link is.
func TestDoneWaitsForTheLinksFoundBeforeIt(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memory.New()
	cp, err := New(s, Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	const page, link, later = 1, 2, 3
	if err := (collyStorage{cp}).Visited(link); err != nil { // found on the page
		t.Fatal(err)
	}
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: page, URL: "http://h/", State: storage.Done})
	cp.active.Add(1)
	cp.end() // as the callback does, holding no stripe
	cp.unlock()
	if _, ok, _ := s.Get(page); ok {
		t.Fatal("the page is done in the store before the link found on it is recorded")
	}
	if err := (collyStorage{cp}).Visited(later); err != nil { // found after the page was done: not waited for
		t.Fatal(err)
	}
	cp.mu.Lock()
	_ = cp.putLocked(storage.Record{ID: link, URL: "http://h/link", State: storage.Pending})
	cp.resolve(link, false)
	cp.active.Add(1)
	cp.end() // as the callback does, holding no stripe
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
	clk := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memory.New()
	cp, err := New(s, Config{Clock: clk, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = (collyStorage{cp}).Visited(10) // a hop
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: 1, URL: "http://h/a", State: storage.Done})
	cp.active.Add(1)
	cp.end() // as the callback does, holding no stripe
	cp.unlock()
	clk.Advance(2 * time.Second)
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: 2, URL: "http://h/b", State: storage.Done})
	cp.active.Add(1)
	cp.end() // as the callback does, holding no stripe
	cp.unlock()
	for _, id := range []uint64{1, 2} {
		if _, ok, _ := s.Get(id); !ok {
			t.Errorf("record %d still held after the grace period", id)
		}
	}
	if cp.Stats().GraceFreed != 1 {
		t.Errorf("stats %+v: want one announcement freed by the grace period", cp.Stats())
	}
	if v, _ := (collyStorage{cp}).IsVisited(10); !v {
		t.Errorf("the hop is no longer visited in this run")
	}
}

// settableClock may be set back, as a wall clock can be.
type settableClock struct{ t time.Time }

func (c *settableClock) Now() time.Time { return c.t }
func (c *settableClock) After(d time.Duration) <-chan time.Time {
	return clocktest.NewFake(c.t).After(d)
}

// Announcements pass the grace period in the order they were made, so the
// oldest unresolved one is at the front of the queue; many resolved ones
// ahead of it are skipped, and every one past the grace period becomes a
// hop.
func TestTheOldestUnresolvedAnnouncementHoldsRecordsBack(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memory.New()
	cp, err := New(s, Config{Clock: clk, Grace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const links = 5000
	for id := uint64(100); id < 100+links; id++ {
		_ = (collyStorage{cp}).Visited(id)
	}
	hop := uint64(100 + links/2) // never requested
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: 1, URL: "http://h/a", State: storage.Done})
	cp.active.Add(1)
	cp.end() // as the callback does, holding no stripe
	for id := uint64(100); id < 100+links; id++ {
		if id != hop {
			cp.resolve(id, false)
		}
	}
	cp.active.Add(1)
	cp.end()
	cp.unlock()
	if _, ok, _ := s.Get(1); ok {
		t.Fatal("the page is done in the store while a link found before it is unrecorded")
	}
	clk.Advance(5 * time.Second)
	_ = (collyStorage{cp}).Visited(2) // after the page: not waited for
	clk.Advance(5 * time.Second)
	cp.mu.Lock()
	cp.active.Add(1)
	cp.end()
	cp.unlock()
	if _, ok, _ := s.Get(1); !ok {
		t.Fatal("the page is still held after its only unrecorded link passed the grace period")
	}
	st := cp.Stats()
	if st.GraceFreed != 1 {
		t.Errorf("stats %+v: want the one hop freed by the grace period, not the later announcement", st)
	}
	if v, _ := (collyStorage{cp}).IsVisited(hop); !v {
		t.Error("the hop is no longer visited in this run")
	}
	cp.mu.Lock()
	_, pending := cp.announced[2]
	queued := len(cp.anns.q) - cp.anns.head
	cp.unlock()
	if !pending {
		t.Error("the announcement made after the page was taken for a hop before its grace period ended")
	}
	if queued > 1 {
		t.Errorf("%d announcements still queued; want only the unresolved one", queued)
	}
}

// With a clock that was set back, an announcement made later may pass the
// grace period first: it is still taken for a hop, and the one before it,
// not yet past, still holds records back.
func TestAClockSetBackStillFreesEveryAnnouncementPastTheGracePeriod(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &settableClock{t: t0.Add(5 * time.Second)}
	s := memory.New()
	cp, err := New(s, Config{Clock: clk, Grace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = (collyStorage{cp}).Visited(10) // at t0+5s
	clk.t = t0
	_ = (collyStorage{cp}).Visited(11) // at t0, made later
	cp.mu.Lock()
	_ = cp.finalLocked(storage.Record{ID: 1, URL: "http://h/a", State: storage.Done})
	cp.active.Add(1)
	cp.end() // as the callback does, holding no stripe
	cp.unlock()
	clk.t = t0.Add(12 * time.Second) // 11 is past the grace period, 10 is not
	cp.mu.Lock()
	cp.active.Add(1)
	cp.end()
	_, hop11 := cp.hops[11]
	_, ann10 := cp.announced[10]
	cp.unlock()
	if !hop11 || !ann10 {
		t.Errorf("announcement 11 a hop: %v (want true); 10 still announced: %v (want true)", hop11, ann10)
	}
	if _, ok, _ := s.Get(1); ok {
		t.Error("the page is done in the store while announcement 10, made before it, is within its grace period")
	}
	if st := cp.Stats(); st.GraceFreed != 1 {
		t.Errorf("stats %+v: want one announcement freed", st)
	}
}

// A held record that a newer state of the same URL supersedes is dropped:
// releasing the held records later must not write the older state over
// the newer one, and the other held records keep their order.
func TestANewerStateDropsTheHeldRecordOfItsURL(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memory.New()
	cp, err := New(s, Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	_ = (collyStorage{cp}).Visited(10) // a link, unrecorded: holds what follows
	cp.mu.Lock()
	for id := uint64(1); id <= 3; id++ {
		_ = cp.finalLocked(storage.Record{ID: id, URL: "http://h/", State: storage.Done})
		cp.active.Add(1)
		cp.end() // as the callback does, holding no stripe
	}
	cp.dropHeld(2)
	cp.dropHeld(7) // not held: nothing happens
	_ = cp.putLocked(storage.Record{ID: 2, URL: "http://h/", State: storage.InFlight, Attempts: 2})
	if n := len(cp.held.q); n != 2 {
		t.Errorf("%d records held, want 2", n)
	}
	cp.resolve(10, false)
	cp.active.Add(1)
	cp.end() // as the callback does, holding no stripe
	cp.unlock()
	for id, want := range map[uint64]storage.State{1: storage.Done, 2: storage.InFlight, 3: storage.Done} {
		if r, ok, _ := s.Get(id); !ok || r.State != want {
			t.Errorf("record %d: %v (found %v), want %v", id, r.State, ok, want)
		}
	}
	if len(cp.held.q) != 0 || len(cp.held.ids) != 0 {
		t.Errorf("held %d records, %d IDs after the release; want none", len(cp.held.q), len(cp.held.ids))
	}
}
