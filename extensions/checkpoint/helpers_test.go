package checkpoint_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// fast keeps the file store's commits quick for tests.
var fast = bolt.Config{FlushInterval: 5 * time.Millisecond}

// stores holds the file store under each checkpoint openFile made, for
// closeCP.
var stores sync.Map // *checkpoint.Checkpoint → storage.Store

// openFile opens the checkpoint file at path as a program does: the
// embedded store with bopts, then the checkpoint on it with the one
// Config given, if any. closeCP closes both.
func openFile(path string, bopts []bolt.Config, opts ...checkpoint.Config) (*checkpoint.Checkpoint, error) {
	var cfg checkpoint.Config
	switch len(opts) {
	case 0:
	case 1:
		cfg = opts[0]
	default:
		return nil, fmt.Errorf("openFile: %d checkpoint.Configs; give at most one", len(opts))
	}
	s, err := bolt.Open(path, bopts...)
	if err != nil {
		return nil, err
	}
	cp, err := checkpoint.New(s, cfg)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	stores.Store(cp, s)
	return cp, nil
}

// closeCP closes cp, then the file store openFile opened under it.
func closeCP(cp *checkpoint.Checkpoint) error {
	err := cp.Close()
	if s, ok := stores.LoadAndDelete(cp); ok {
		err = errors.Join(err, s.(storage.Store).Close())
	}
	return err
}

func startStore(t *testing.T, cfg testserver.Config) *testserver.Store {
	t.Helper()
	s, err := testserver.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openCP(t *testing.T, path string, opts ...checkpoint.Config) *checkpoint.Checkpoint {
	t.Helper()
	cp, err := openFile(path, []bolt.Config{fast}, opts...)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	t.Cleanup(func() { _ = closeCP(cp) })
	return cp
}

func dbPath(t *testing.T) string { return filepath.Join(t.TempDir(), "crawl.db") }

// crawler is a product crawl over the test store's markup: listing pages
// link products and the next listing; product pages are the records.
type crawler struct {
	c        *colly.Collector
	mu       sync.Mutex
	products map[string]int // product URL → times scraped with 200
	stop     bool           // abort every request from now on
}

func newCrawler(t *testing.T, cp *checkpoint.Checkpoint, b *breaker.Breaker, parallelism int, opts ...colly.CollectorOption) *crawler {
	t.Helper()
	cr := &crawler{products: map[string]int{}}
	cr.c = colly.NewCollector(append([]colly.CollectorOption{colly.Async(true)}, opts...)...)
	cr.c.SetRequestTimeout(5 * time.Second)
	if err := cr.c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: parallelism}); err != nil {
		t.Fatal(err)
	}
	cr.c.OnRequest(func(r *colly.Request) {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		if cr.stop {
			r.Abort()
		}
	})
	if b != nil {
		b.Register(cr.c)
	}
	cp.Register(cr.c)
	cr.c.OnHTML(testserver.ProductLinkSelector+", "+testserver.NextSelector, func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})
	cr.c.OnHTML(testserver.TitleSelector, func(e *colly.HTMLElement) {
		cr.mu.Lock()
		cr.products[e.Request.URL.String()]++
		cr.mu.Unlock()
	})
	return cr
}

func (cr *crawler) halt() {
	cr.mu.Lock()
	cr.stop = true
	cr.mu.Unlock()
}

func counts(t *testing.T, cp *checkpoint.Checkpoint) map[storage.State]int {
	t.Helper()
	c, err := cp.Counts()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetchedTwice lists the product paths the store served more than once.
func fetchedTwice(s *testserver.Store, n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		if s.CountPath(testserver.ProductPath(i)) > 1 {
			out = append(out, testserver.ProductPath(i))
		}
	}
	return out
}
