package checkpoint

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/gocolly/colly/v2"
)

// The benchmarks compare the embedded file store with the memory backend
// in one run:
//
//	go test -run '^$' -bench . -benchmem ./extensions/checkpoint/
//
// BenchmarkUpdates drives the checkpoint's own Colly callbacks the way a
// crawl does, one URL after another: Colly marks it visited, OnRequest
// (pending), OnRequestHeaders (in flight), OnScraped (done). Each URL is
// three state updates; a final Flush is inside the timer, so every update
// counted is durable.
//
// BenchmarkResume opens a checkpoint of 1,000,000 URLs, half of them done
// and the rest pending, in flight, failed, parked or dead as a tripped
// crawl leaves them, and builds the frontier a resume walks (what
// QueueSize, GetRequest and Resume start from): 450,000 URLs. The store is
// built once per backend, outside the timer.

type benchBackend struct {
	name string
	open func(b *testing.B, name string) storage.Store
}

func benchBackends(dir string) []benchBackend {
	return []benchBackend{
		{"memory", func(*testing.B, string) storage.Store { return memory.New() }},
		{"bolt", func(b *testing.B, name string) storage.Store {
			s, err := bolt.Open(filepath.Join(dir, name+".db"), bolt.Config{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
}

func BenchmarkUpdates(b *testing.B) {
	dir := b.TempDir()
	for _, be := range benchBackends(dir) {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b, fmt.Sprintf("updates-%d", time.Now().UnixNano()))
			defer s.Close()
			cp, err := New(s, Config{})
			if err != nil {
				b.Fatal(err)
			}
			hdr := http.Header{"User-Agent": {"breakwater-bench/1.0"}}
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				u, _ := url.Parse(fmt.Sprintf("https://shop.example.test/catalogue/category-%d/product-%07d.html", i%97, i))
				r := &colly.Request{URL: u, Method: "GET", Depth: 2, Headers: &hdr, Ctx: colly.NewContext()}
				if err := (collyStorage{cp}).Visited(collyx.RequestID(u.String(), nil)); err != nil {
					b.Fatal(err)
				}
				cp.onRequest(r)
				cp.onRequestHeaders(r)
				cp.finish(&colly.Response{Request: r, StatusCode: 200}, nil)
			}
			if err := cp.Flush(); err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.ReportMetric(float64(3*b.N)/elapsed.Seconds(), "updates/s")
			if st := cp.Stats(); st.Updates != 3*b.N {
				b.Fatalf("%d updates written, want %d", st.Updates, 3*b.N)
			}
		})
	}
}

// BenchmarkQueuedUpFront is the crawl that queues its URLs before the
// first page comes back (what the bench's overhead scenario does): Colly
// marks a batch of 1,000 URLs visited at once, then they are requested
// and finish one by one, each done record waiting for the links announced
// before it. ns/op is per URL.
func BenchmarkQueuedUpFront(b *testing.B) {
	const batch = 1000
	cp, err := New(memory.New(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	hdr := http.Header{"User-Agent": {"breakwater-bench/1.0"}}
	reqs := make([]*colly.Request, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		b.StopTimer()
		benchRequests(reqs, &hdr, "https://shop.example.test/catalogue/product-%07d.html", n)
		b.StartTimer()
		for _, r := range reqs {
			if err := (collyStorage{cp}).Visited(collyx.RequestID(r.URL.String(), nil)); err != nil {
				b.Fatal(err)
			}
		}
		for _, r := range reqs {
			cp.onRequest(r)
			cp.onRequestHeaders(r)
			cp.finish(&colly.Response{Request: r, StatusCode: 200}, nil)
		}
	}
	b.StopTimer()
	if err := cp.Close(); err != nil {
		b.Fatal(err)
	}
}

const resumeRecords = 1_000_000

// resumeState is the state of URL i in the resume checkpoint.
func resumeState(i int) storage.State {
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
	}
	return storage.Dead
}

func resumeRecord(i int) storage.Record {
	u := fmt.Sprintf("https://shop.example.test/catalogue/category-%d/product-%07d.html", i%97, i)
	r := storage.Record{ID: collyx.RequestID(u, nil), URL: u, State: resumeState(i), Attempts: 1,
		Request: fmt.Appendf(nil, `{"URL":%q,"Method":"GET","Depth":3,"Body":null,"ID":%d,"Ctx":{},"Headers":{"User-Agent":["breakwater-bench/1.0"]},"Host":""}`, u, i)}
	if r.State == storage.Parked {
		r.NotBefore = time.Now().Add(-time.Minute) // eligible again
	}
	return r
}

func BenchmarkResume(b *testing.B) {
	dir, err := os.MkdirTemp("", "checkpoint-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, be := range benchBackends(dir) {
		b.Run(be.name, func(b *testing.B) {
			var mem storage.Store
			build := func() {
				s := be.open(b, "resume")
				recs := make([]storage.Record, 0, 10_000)
				for i := range resumeRecords {
					recs = append(recs, resumeRecord(i))
					if len(recs) == cap(recs) {
						if err := s.Put(recs...); err != nil {
							b.Fatal(err)
						}
						recs = recs[:0]
					}
				}
				if be.name == "memory" {
					mem = s
					return
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
			build()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			start := time.Now()
			frontier := 0
			for range b.N {
				s := mem
				if s == nil {
					s = be.open(b, "resume")
				}
				cp, err := New(s, Config{})
				if err != nil {
					b.Fatal(err)
				}
				if frontier, err = (collyStorage{cp}).QueueSize(); err != nil {
					b.Fatal(err)
				}
				if err := cp.Close(); err != nil {
					b.Fatal(err)
				}
				if mem == nil {
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			runtime.ReadMemStats(&after)
			if frontier != resumeRecords*9/20 {
				b.Fatalf("frontier of %d URLs, want %d", frontier, resumeRecords*9/20)
			}
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/resume")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/1e6, "MB-alloc/resume")
			b.ReportMetric(float64(frontier), "frontier")
		})
	}
}

// BenchmarkPagePath is one page's calls into the checkpoint in a broad
// crawl with a breaker, in Colly's order: IsVisited, Visited, Cookies,
// OnRequest (pending), OnRequestHeaders (in flight), the breaker's
// outcome (done), OnScraped. Each URL is on a host of its own, as in the
// bench's broad-small scenario; the requests are made outside the timer.
// ns/op and allocs/op are per page.
func BenchmarkPagePath(b *testing.B) {
	const batch = 4096
	cp, hdr := pagePathCheckpoint(b)
	reqs := make([]*colly.Request, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		b.StopTimer()
		benchRequests(reqs, &hdr, "https://d%07d.example.test/product.html", n)
		b.StartTimer()
		for _, r := range reqs[:min(batch, b.N-n)] {
			onePage(b, cp, r)
		}
	}
	b.StopTimer()
	if err := cp.Close(); err != nil {
		b.Fatal(err)
	}
}

// pagePathCheckpoint is the page path benchmarks' checkpoint, on
// storage/memory and following a breaker, and the header their requests
// carry.
func pagePathCheckpoint(b *testing.B) (*Checkpoint, http.Header) {
	cp, err := New(memory.New(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	cp.viaBreaker.Store(true)
	return cp, http.Header{"User-Agent": {"breakwater-bench/1.0"}}
}

// onePage is one page's calls into cp, as Colly and the breaker make them.
func onePage(tb testing.TB, cp *Checkpoint, r *colly.Request) {
	s := collyStorage{cp}
	id := collyx.RequestID(r.URL.String(), nil)
	if seen, err := s.IsVisited(id); err != nil || seen {
		tb.Fatalf("IsVisited: %v, %v", seen, err)
	}
	if err := s.Visited(id); err != nil {
		tb.Fatal(err)
	}
	_ = s.Cookies(r.URL)
	cp.onRequest(r)
	cp.onRequestHeaders(r)
	cp.onOutcome(observe.Attempt{Request: r, Domain: r.URL.Host, Result: circuit.Result{Class: circuit.Success}, Status: 200})
	cp.finish(&colly.Response{Request: r, StatusCode: 200}, nil)
}

// BenchmarkPagePathHeld is BenchmarkPagePath as a crawl of many goroutines
// has it: the next URL is marked visited before this page's outcome, so
// each done record is held back (barrier.go) and written when the next
// request leaves.
func BenchmarkPagePathHeld(b *testing.B) {
	const batch = 4096
	cp, hdr := pagePathCheckpoint(b)
	reqs := make([]*colly.Request, batch+1)
	s := collyStorage{cp}
	announce := func(r *colly.Request) {
		id := collyx.RequestID(r.URL.String(), nil)
		if seen, err := s.IsVisited(id); err != nil || seen {
			b.Fatalf("IsVisited: %v, %v", seen, err)
		}
		if err := s.Visited(id); err != nil {
			b.Fatal(err)
		}
		_ = s.Cookies(r.URL)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		b.StopTimer()
		benchRequests(reqs, &hdr, "https://d%07d.example.test/product.html", n)
		b.StartTimer()
		announce(reqs[0])
		k := min(batch, b.N-n)
		for i, r := range reqs[:k] {
			cp.onRequest(r)
			cp.onRequestHeaders(r)
			if i+1 < k {
				announce(reqs[i+1])
			}
			cp.onOutcome(observe.Attempt{Request: r, Domain: r.URL.Host, Result: circuit.Result{Class: circuit.Success}, Status: 200})
			cp.finish(&colly.Response{Request: r, StatusCode: 200}, nil)
		}
	}
	b.StopTimer()
	if got := cp.Stats().HeldDone; got < b.N/2 {
		b.Fatalf("%d done records held back, want most of %d", got, b.N)
	}
	if err := cp.Close(); err != nil {
		b.Fatal(err)
	}
}

// benchRequests fills reqs with GET requests at depth 1 for the URLs of
// format (a %d verb) numbered from from on, each with hdr and a Ctx.
func benchRequests(reqs []*colly.Request, hdr *http.Header, format string, from int) {
	for i := range reqs {
		u, _ := url.Parse(fmt.Sprintf(format, from+i))
		reqs[i] = &colly.Request{URL: u, Method: "GET", Depth: 1, Headers: hdr, Ctx: colly.NewContext()}
	}
}
