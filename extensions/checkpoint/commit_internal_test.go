package checkpoint

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage"
)

// A take is a cut of the buffer: a record written before another is never
// taken after it (a link's record before its page's done record), while
// writers add records to every shard under way.
func TestTakeNeverTakesARecordBeforeOneWrittenEarlier(t *testing.T) {
	p := &pending{}
	const writers, per = 4, 3000
	var wg sync.WaitGroup
	var done atomic.Int32
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer done.Add(1)
			for k := range per {
				p.add([]storage.Record{{ID: uint64(w*per + k)}})
			}
		}()
	}
	batchOf := make(map[uint64]int, writers*per)
	for batch := 1; ; batch++ {
		finished := done.Load() == writers
		if p.take() {
			for _, r := range p.unfinished {
				if _, dup := batchOf[r.ID]; dup {
					t.Fatalf("record %d taken twice", r.ID)
				}
				batchOf[r.ID] = batch
			}
			p.done()
		}
		if finished && p.n.Load() == 0 {
			break
		}
	}
	wg.Wait()
	if len(batchOf) != writers*per {
		t.Fatalf("%d records taken, want %d", len(batchOf), writers*per)
	}
	for w := range writers {
		for k := 1; k < per; k++ {
			id := uint64(w*per + k)
			if batchOf[id-1] > batchOf[id] {
				t.Fatalf("record %d taken in batch %d, after record %d written later (batch %d)", id-1, batchOf[id-1], id, batchOf[id])
			}
		}
	}
}

// The buffer keeps the newest record of an ID once: a later write
// replaces it, in the shard and as get reads it.
func TestTheBufferKeepsTheNewestRecordOfAnID(t *testing.T) {
	p := &pending{}
	p.add([]storage.Record{{ID: 7, State: storage.Pending}, {ID: 8, State: storage.Pending}})
	p.add([]storage.Record{{ID: 7, State: storage.InFlight}})
	if n := p.n.Load(); n != 2 {
		t.Fatalf("%d records buffered, want 2", n)
	}
	if r, ok := p.get(7); !ok || r.State != storage.InFlight {
		t.Fatalf("get(7) = %v, %v; want the in-flight record", r.State, ok)
	}
	if !p.take() || len(p.unfinished) != 2 || p.n.Load() != 0 {
		t.Fatalf("take: %d records, %d left; want 2 and none", len(p.unfinished), p.n.Load())
	}
	if r, ok := p.get(7); !ok || r.State != storage.InFlight {
		t.Fatalf("get(7) while being put = %v, %v; want the in-flight record", r.State, ok)
	}
	// Written while its older record is being put: kept after the put.
	p.add([]storage.Record{{ID: 7, State: storage.Done}})
	if r, ok := p.get(7); !ok || r.State != storage.Done {
		t.Fatalf("get(7) = %v, %v; want the done record written during the put", r.State, ok)
	}
	p.done()
	if r, ok := p.get(7); !ok || r.State != storage.Done || p.n.Load() != 1 {
		t.Fatalf("after the put: get(7) = %v, %v, %d buffered; want the done record alone", r.State, ok, p.n.Load())
	}
	if _, ok := p.get(8); ok {
		t.Fatal("get(8) after the put: still buffered")
	}
	if !p.take() || len(p.final) != 1 {
		t.Fatalf("take: %d final records, want 1", len(p.final))
	}
	p.done()
	if p.take() {
		t.Fatal("a take of an empty buffer took a batch")
	}
}

// A flush allocates nothing once the shards' slices have grown: a record
// buffered, the batch taken and cut off reuse them.
func TestTheBufferAllocatesNothingFromFlushToFlush(t *testing.T) {
	p := &pending{}
	recs := []storage.Record{{ID: 1, State: storage.Pending}, {ID: 2, State: storage.InFlight}, {ID: 1, State: storage.Done}}
	cycle := func() {
		for i := range recs {
			p.add(recs[i : i+1])
		}
		if !p.take() {
			t.Fatal("nothing taken")
		}
		p.done()
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("a buffer's add, take and cut-off allocate %.1f times, want 0", n)
	}
}
