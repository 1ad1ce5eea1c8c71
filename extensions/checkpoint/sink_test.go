package checkpoint_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/internal/childtest"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// sinkProducts is how many product pages the kill-and-resume crawl has.
const sinkProducts = 60

// A program writing one JSON line per product, killed with SIGKILL in the
// middle of a line and run again: the file holds every product's line
// exactly once, and every line is whole JSON.
func TestSinkWritesEachProductOnceAcrossAKillMidLine(t *testing.T) {
	store := startStore(t, testserver.Config{Products: sinkProducts, PerPage: sinkProducts,
		Scenario: testserver.Scenario{Latency: 2 * time.Millisecond}})
	dir := t.TempDir()
	db, out := dir+"/crawl.db", dir+"/products.jsonl"
	env := []string{"BW_CP_HELPER=sinkcrawl", "BW_CP_PATH=" + db, "BW_SINK_OUT=" + out, "BW_SINK_URL=" + store.URL()}

	cmd, lines := childtest.Start(t, append(env, "BW_SINK_TEAR=1500")...)
	childtest.Next(t, lines, "torn") // the file ends in the middle of a line, at 1500 bytes
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	before, _ := os.ReadFile(out)

	cmd, lines = childtest.Start(t, env...)
	stats := childtest.Next(t, lines, "done")
	_ = cmd.Wait()
	t.Logf("the resumed run's sink: %s", stats)
	if !strings.Contains(stats, "TornBytes:") || strings.Contains(stats, "TornBytes:0 ") {
		t.Errorf("the resumed run cut no torn record: %s", stats)
	}

	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	var bad []string
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var r struct{ URL, Title string }
		if err := json.Unmarshal(line, &r); err != nil || r.URL == "" {
			bad = append(bad, strconv.Itoa(i+1)+": "+string(line))
			continue
		}
		seen[r.URL]++
	}
	var twice, missing []string
	for i := 1; i <= sinkProducts; i++ {
		u := store.URL() + testserver.ProductPath(i)
		switch seen[u] {
		case 1:
		case 0:
			missing = append(missing, testserver.ProductPath(i))
		default:
			twice = append(twice, testserver.ProductPath(i))
		}
		delete(seen, u)
	}
	if len(bad)+len(twice)+len(missing)+len(seen) > 0 || !bytes.HasSuffix(b, []byte("\n")) {
		t.Errorf("after the kill (%d bytes then) and the resume: %d lines not whole JSON %q; products written twice %v; missing %v; other URLs %v",
			len(before), len(bad), bad, twice, missing, seen)
	}
}

// sinkCrawlChild crawls the store at BW_SINK_URL, checkpointed in path,
// and writes a JSON line per product to BW_SINK_OUT, as a program does.
// With BW_SINK_TEAR=n, the write that would take the file past n bytes
// stops there (a slow disk), says "torn" and waits to be killed. Without, it resumes what is
// left, crawls to the end and says "done".
func sinkCrawlChild(path string) error {
	tear, _ := strconv.Atoi(os.Getenv("BW_SINK_TEAR"))
	f, err := os.OpenFile(os.Getenv("BW_SINK_OUT"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	out := &tearingFile{File: f, tearAt: tear}
	cp, err := openFile(path, nil)
	if err != nil {
		return err
	}
	defer closeCP(cp)
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		return err
	}
	c := colly.NewCollector(colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		return err
	}
	if err := breakwater.Use(c, b, cp); err != nil {
		return err
	}
	write, stats, err := productWriter(cp, out)
	if err != nil {
		return err
	}
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		if err := write(e.Request, map[string]string{"url": e.Request.URL.String(), "title": e.ChildText("h1.title")}); err != nil {
			childtest.Say("error %v", err)
		}
	})
	c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})
	if _, err := cp.Resume(c); err != nil {
		return err
	}
	_ = c.Visit(os.Getenv("BW_SINK_URL") + "/")
	c.Wait()
	if err := closeCP(cp); err != nil {
		return err
	}
	childtest.Say("done %s", stats())
	return nil
}

// productWriter is how the child writes a product: one JSON line, through
// the checkpoint's Sink.
func productWriter(cp *checkpoint.Checkpoint, out *tearingFile) (func(*colly.Request, any) error, func() string, error) {
	sink, err := cp.Sink(out, checkpoint.SinkConfig{})
	if err != nil {
		return nil, nil, err
	}
	return sink.Write, func() string { return fmt.Sprintf("%+v", sink.Stats()) }, nil
}

// tearingFile is a file whose write that would take it past tearAt bytes
// (if not 0) stops there, in the middle of a line, says "torn" and never
// returns: a process killed in the middle of a write.
type tearingFile struct {
	*os.File
	mu     sync.Mutex
	n      int
	tearAt int
}

func (f *tearingFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tearAt == 0 || f.n+len(p) <= f.tearAt {
		f.n += len(p)
		return f.File.Write(p)
	}
	k := f.tearAt - f.n
	if k > 0 && p[k-1] == '\n' && k+1 < len(p) {
		k++ // in a line, not between two
	}
	_, _ = f.File.Write(p[:k])
	childtest.Say("torn")
	select {} // until killed
}

// sinkCrawl crawls store with cp (and v, if not nil) on a breaker,
// writing each product page's title through sink twice (a page with two
// records), and returns what Write returned from OnScraped, too late.
func sinkCrawl(t *testing.T, cp *checkpoint.Checkpoint, v *validate.Validator, sink *checkpoint.Sink, store *testserver.Store) error {
	t.Helper()
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	exts := []breakwater.Extension{b, cp}
	if v != nil {
		exts = append([]breakwater.Extension{v}, exts...)
	}
	if err := breakwater.Use(c, exts...); err != nil {
		t.Fatal(err)
	}
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		for _, part := range []string{"title", "again"} {
			if err := sink.Write(e.Request, map[string]string{"url": e.Request.URL.String(), part: e.ChildText("h1.title")}); err != nil && sink.Err() == nil {
				t.Error(err)
			}
		}
	})
	var late error
	var mu sync.Mutex
	c.OnScraped(func(r *colly.Response) {
		if err := sink.Write(r.Request, "late"); err != nil {
			mu.Lock()
			late = err
			mu.Unlock()
		}
	})
	c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})
	if _, err := cp.Resume(c); err != nil {
		t.Fatal(err)
	}
	_ = c.Visit(store.URL() + "/")
	c.Wait()
	return late
}

// A page whose attempt does not end done (here: found invalid after its
// records were written) puts nothing in the file; the run that gets it
// done writes its records, once. A Write once the page's outcome is
// recorded is refused.
func TestSinkWritesNothingForAnAttemptThatIsNotDone(t *testing.T) {
	// 5 invalid pages: too few to trip the breaker, which would park them.
	store := startStore(t, testserver.Config{Products: 5, PerPage: 5})
	path := dbPath(t)
	out := filepath.Join(t.TempDir(), "products.jsonl")
	for run, floor := range []int{1 << 20, 1024} { // run 0: every product page below the floor
		cp := openCP(t, path)
		f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		sink, err := cp.Sink(f, checkpoint.SinkConfig{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := validate.New(validate.Config{
			Checks: []validate.Check{validate.MinBytes(0)},
			Pages: []validate.Page{
				{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(floor)}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		late := sinkCrawl(t, cp, v, sink, store)
		if err := closeCP(cp); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if !errors.Is(late, checkpoint.ErrNoAttempt) {
			t.Errorf("run %d: a Write from OnScraped: %v, want ErrNoAttempt", run, late)
		}
		b, _ := os.ReadFile(out)
		lines := strings.Count(string(b), "\n")
		switch run {
		case 0:
			if lines != 0 {
				t.Errorf("run 0, every product invalid: %d lines, want none", lines)
			}
		case 1:
			for i := 1; i <= 5; i++ {
				u := `"url":"` + store.URL() + testserver.ProductPath(i) + `"`
				if n := strings.Count(string(b), u); n != 2 {
					t.Errorf("%s: %d lines, want its 2", testserver.ProductPath(i), n)
				}
			}
			if lines != 10 || sink.Stats().Written != 5 {
				t.Errorf("run 1: %d lines, stats %+v; want 10 lines of 5 pages", lines, sink.Stats())
			}
		}
	}
}
