// Package breakwater wires Breakwater's extensions into a Colly collector.
//
// Breakwater is a set of extensions for github.com/gocolly/colly/v2 that make
// a crawl notice when a target site degrades, stop sending it traffic, keep
// every page it already collected, and say honestly why it stopped. Each
// extension lives in a package of its own under extensions/ and is wired in
// with one call, Use (ExampleUse runs this):
//
//	c := colly.NewCollector()
//	v, _ := validate.New(validate.Config{
//		// Product pages by their own structure, listing pages by theirs.
//		Pages:  []validate.Page{{Pattern: `/products/`, Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}}},
//		Checks: []validate.Check{validate.Require("ul.products")},
//	})
//	b, _ := breaker.New(breaker.Config{Profile: breaker.Standard()})
//	err := breakwater.Use(c, v, b) // Use hands the breaker the validator: pass it once
//
// The README's Usage (examples/usage) is the complete program, from the
// start URL to the exit code. Its main is Main, which turns a crash into
// exit 1 (Go's runtime exits 2, the code of a tripped run) and SIGINT or
// SIGTERM into a cancelled context, for colly.StdlibContext.
//
// Every extension is also a colly.CollectorOption through its Register
// method: colly.NewCollector(colly.Async(true), b.Register).
package breakwater
