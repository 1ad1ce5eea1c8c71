package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A crawl writes one JSON line per product through a Sink; a kill that
// tore the last line is mended when the next run makes its Sink.
func ExampleCheckpoint_Sink() {
	store, _ := testserver.Start(testserver.Config{Products: 3, PerPage: 3})
	defer store.Close()
	dir, _ := os.MkdirTemp("", "sink-example-")
	defer os.RemoveAll(dir)
	ckpt, out := filepath.Join(dir, "crawl.db"), filepath.Join(dir, "products.jsonl")

	run := func() {
		st, err := bolt.Open(ckpt)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer st.Close() // after cp.Close
		cp, err := checkpoint.New(st, checkpoint.Config{})
		if err != nil {
			fmt.Println(err)
			return
		}
		// Read-write, so that the Sink can check it against the checkpoint.
		f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer f.Close() // after cp.Close, which writes the last records
		// A torn last line is cut, what the file lacks appended.
		sink, err := cp.Sink(f, checkpoint.SinkConfig{})
		if err != nil {
			fmt.Println(err) // a file that is not this crawl's output: left as it is
			return
		}
		c := colly.NewCollector(colly.Async(true))
		cp.Register(c) // or breakwater.Use(c, v, b, cp)
		c.OnHTML("div.product", func(e *colly.HTMLElement) {
			// In OnHTML: written once the page is done, and only then.
			if err := sink.Write(e.Request, map[string]string{"url": e.Request.URL.Path}); err != nil {
				fmt.Println(err)
			}
		})
		c.OnHTML(testserver.ProductLinkSelector, func(e *colly.HTMLElement) {
			_ = e.Request.Visit(e.Attr("href"))
		})
		_, _ = cp.Resume(c)
		_ = c.Visit(store.URL() + "/")
		c.Wait()
		_ = cp.Close()
		s := sink.Stats()
		fmt.Printf("earlier %d (torn %d bytes, restored %d), written %d, err %v\n", s.Earlier, s.TornBytes, s.Restored, s.Written, sink.Err())
	}

	run()
	fi, _ := os.Stat(out)
	_ = os.Truncate(out, fi.Size()-10) // a kill in the middle of the last line
	run()
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// earlier 0 (torn 0 bytes, restored 0), written 3, err <nil>
	// earlier 3 (torn 16 bytes, restored 1), written 0, err <nil>
	// {"url":"/products/sku-1"}
	// {"url":"/products/sku-2"}
	// {"url":"/products/sku-3"}
}
