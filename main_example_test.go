package breakwater_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/gocolly/colly/v2"
)

// A program's whole main: the crawl is the run, its ending the exit code.
// A crash exits 1; SIGINT or SIGTERM stop the requests (through
// colly.StdlibContext) and the crawl ends tripped. (Main exits the process
// it runs in, so this example is compiled, not run: examples/usage runs
// the same shape against a test store.)
func ExampleMain() {
	breakwater.Main(func(ctx context.Context) int {
		c := colly.NewCollector(colly.StdlibContext(ctx))
		b, err := breaker.New(breaker.Config{Profile: breaker.Standard()})
		if err == nil {
			err = breakwater.Use(c, b)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return outcome.Usage
		}
		var records int64
		c.OnHTML("div.product", func(*colly.HTMLElement) { records++ })
		const start = "https://shop.example/"
		if err := c.Visit(start); err != nil {
			b.NotVisited(start, err)
		}
		c.Wait()
		if errors.Is(context.Cause(ctx), breakwater.ErrInterrupted) {
			fmt.Fprintln(os.Stderr, "interrupted: a rescheduled run does the rest")
		}
		return outcome.Decide(records, b).State.ExitCode() // 0, 2, 3 or 1
	})
}
