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
// form has every field and a schema_version (SchemaVersion).
package report
