package breakwater

import "github.com/gocolly/colly/v2"

// Extension is anything that wires itself into a collector by registering
// callbacks. Every Breakwater extension implements it, and its Register
// method value is a colly.CollectorOption.
type Extension interface {
	Register(c *colly.Collector)
}

// Use registers each extension on c, in order. Order matters where one
// extension reads what another records: pass the validator before the
// breaker that consults it, and the checkpoint last. A nil extension is
// skipped.
func Use(c *colly.Collector, exts ...Extension) {
	for _, e := range exts {
		if e != nil {
			e.Register(c)
		}
	}
}
