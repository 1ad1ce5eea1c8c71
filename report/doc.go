// Package report is the per-domain account of a crawl that a person reads
// at the end of a run and a machine parses: how the run ended (the
// outcome package decides that), and for every domain how many pages were
// good, how many were invalid, how the rest failed, how many requests the
// breaker refused, what is left unfinished, how many URLs died of
// failures (named by cause, with samples, below the table), how often the
// circuit tripped, the median latency, the circuit's final state and the
// validator's selector_broken diagnosis.
//
// Any Colly program using Breakwater builds one after c.Wait():
//
//	o := outcome.Decide(records, v, b) // add outcome.Failed(err) if the crawl itself failed
//	r := report.New(o, report.Sources{Breaker: b, Validator: v,
//		Records: perDomain, Start: start, End: time.Now()})
//	r.Write(os.Stdout, report.Text) // or report.JSON
//
// Every source is optional. The text form is an aligned table for people,
// with columns for rare classes only when some domain has one; the JSON
// form has every field and a schema_version (SchemaVersion). The HTML form
// is a page that needs nothing but itself: per domain a timeline of the
// circuit's state, the requests by outcome, the pauses and the trips, from
// a Timeline that followed the breaker during the crawl, then the table:
//
//	tl := report.NewTimeline(report.TimelineConfig{}) // before the crawl
//	tl.Observe(b)
//	...
//	r := report.New(o, report.Sources{Breaker: b, Timeline: tl, End: time.Now()})
//	r.Write(f, report.HTML)
package report
