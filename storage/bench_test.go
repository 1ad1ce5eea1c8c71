package storage_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/storage/memory"
)

// The benchmarks compare the backends side by side:
//
//	go test -run '^$' -bench . -benchmem ./storage/
//
// BenchmarkUpdates measures state updates per second the way a crawl
// makes them: one Put per event from the crawl loop, URLs going in flight
// in frontier order and done a window later, and a final Flush inside the
// timer, so every update counted is durable.
//
// BenchmarkResume measures what a restart costs: a checkpoint of 1,000,000
// URLs, half of them done, is opened (bolt) and its non-done frontier
// (pending, in flight, failed, parked: 450,000 records) scanned in order.
// The store is built once per backend, outside the timer.

var benchDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "breakwater-storage-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	benchDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type backend struct {
	name string
	// open opens (or creates) the named store; memory ignores the name
	// and starts empty.
	open func(b *testing.B, name string, c bolt.Config) storage.Store
	// durable reports whether reopening a name finds the data again.
	durable bool
}

var backends = []backend{
	{"memory", func(*testing.B, string, bolt.Config) storage.Store { return memory.New() }, false},
	{"bolt", func(b *testing.B, name string, c bolt.Config) storage.Store {
		s, err := bolt.Open(filepath.Join(benchDir, name+".db"), c)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}, true},
}

// benchRecord is URL number i as a crawl stores it: a product URL and the
// request as colly's Marshal writes it (about 200 bytes of JSON).
func benchRecord(i int, st storage.State) storage.Record {
	u := fmt.Sprintf("https://shop.example.test/catalogue/category-%d/product-%07d.html", i%97, i)
	return storage.Record{
		ID:    uint64(i)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019, // spread like FNV-1a
		URL:   u,
		State: st,
		Request: fmt.Appendf(nil, `{"URL":%q,"Method":"GET","Depth":3,"Body":null,"ID":%d,"Ctx":{"origin":"seed"},`+
			`"Headers":{"Accept":["text/html"],"User-Agent":["breakwater-bench/1.0"]},"Host":"shop.example.test"}`, u, i),
	}
}

func BenchmarkUpdates(b *testing.B) {
	const frontier = 100_000 // pending records the updates walk through
	const window = 256       // URLs in flight at once
	patterns := []struct {
		name string
		// pick returns the record and new state of update j.
		pick func(j int) (int, storage.State)
	}{
		// In flight in frontier order, done a window later: what a crawl does.
		{"frontier-order", func(j int) (int, storage.State) {
			if k := j / 2; j%2 == 0 {
				return k % frontier, storage.InFlight
			} else {
				return (k + frontier - window) % frontier, storage.Done
			}
		}},
		// A random record each time: little for the buffer to coalesce and
		// no locality in the file.
		{"random", func(j int) (int, storage.State) {
			h := uint64(j) * 0x9E3779B97F4A7C15
			return int((h >> 20) % frontier), storage.State(h>>8%3) + storage.InFlight
		}},
	}
	for _, p := range patterns {
		for _, be := range backends {
			b.Run(p.name+"/"+be.name, func(b *testing.B) {
				s := be.open(b, fmt.Sprintf("updates-%d", time.Now().UnixNano()), bolt.Config{})
				defer s.Close()
				recs := make([]storage.Record, frontier)
				for i := range recs {
					recs[i] = benchRecord(i, storage.Pending)
				}
				for i := 0; i < frontier; i += 5000 {
					if err := s.Put(recs[i : i+5000]...); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Flush(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				start := time.Now()
				for j := range b.N {
					k, st := p.pick(j)
					r := &recs[k]
					r.State, r.Updated = st, time.Time{}
					if st == storage.InFlight {
						r.Attempts++
					}
					if err := s.Put(*r); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Flush(); err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(start)
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "updates/s")
			})
		}
	}
}

const resumeRecords = 1_000_000

// resumeMix is the state of record i in the resume store: half done, the
// rest spread over the other states as a tripped crawl leaves them.
func resumeMix(i int) storage.State {
	switch i % 20 {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9:
		return storage.Done
	case 10, 11, 12, 13:
		return storage.Pending
	case 14, 15:
		return storage.InFlight
	case 16, 17:
		return storage.Failed
	case 18:
		return storage.Parked
	default:
		return storage.Dead
	}
}

var resumeStates = []storage.State{storage.Pending, storage.InFlight, storage.Failed, storage.Parked}

var (
	resumeOnce  = map[string]*sync.Once{"memory": {}, "bolt": {}}
	resumeStore = map[string]storage.Store{}
)

// buildResume fills a store with the 1M records once per backend and
// process. For bolt it closes the file: each resume opens it afresh.
func buildResume(b *testing.B, be backend) storage.Store {
	resumeOnce[be.name].Do(func() {
		start := time.Now()
		s := be.open(b, "resume", bolt.Config{BatchSize: 200_000, FlushInterval: time.Hour})
		const batch = 10_000
		recs := make([]storage.Record, batch)
		for i := 0; i < resumeRecords; i += batch {
			for k := range recs {
				recs[k] = benchRecord(i+k, resumeMix(i+k))
			}
			if err := s.Put(recs...); err != nil {
				b.Fatal(err)
			}
		}
		if be.durable {
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			s = nil
		}
		resumeStore[be.name] = s
		b.Logf("%s: built %d records in %v", be.name, resumeRecords, time.Since(start).Round(time.Millisecond))
	})
	return resumeStore[be.name]
}

func BenchmarkResume(b *testing.B) {
	want := 0
	for i := range resumeRecords {
		for _, st := range resumeStates {
			if resumeMix(i) == st {
				want++
			}
		}
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			built := buildResume(b, be)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				s := built
				if be.durable {
					s = be.open(b, "resume", bolt.Config{})
				}
				n, bytes := 0, 0
				err := s.Scan(func(r storage.Record) error {
					n++
					bytes += len(r.Request)
					return nil
				}, resumeStates...)
				if err != nil {
					b.Fatal(err)
				}
				if n != want {
					b.Fatalf("resume found %d records, want %d", n, want)
				}
				if be.durable {
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/resume")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/1e6, "MB-alloc/resume")
			b.ReportMetric(float64(want), "records/resume")
			if fi, err := os.Stat(filepath.Join(benchDir, "resume.db")); err == nil && be.durable {
				b.ReportMetric(float64(fi.Size())/1e6, "MB-file")
			}
		})
	}
}
