// Package breakwater wires Breakwater's extensions into a Colly collector.
//
// Breakwater is a set of extensions for github.com/gocolly/colly/v2 that make
// a crawl notice when a target site degrades, stop sending it traffic, keep
// every page it already collected, and say honestly why it stopped. Each
// extension lives in a package of its own under extensions/ and is wired in
// with one line:
//
//	c := colly.NewCollector(colly.Async(true))
//	v, _ := validate.New(validate.MinBytes(1024), validate.Require("h1.title"))
//	b, _ := breaker.New(breaker.Standard(), breaker.Config{Validator: v})
//	breakwater.Use(c, v, b)
//
// Every extension is also a colly.CollectorOption through its Register
// method: colly.NewCollector(colly.Async(true), b.Register).
package breakwater
