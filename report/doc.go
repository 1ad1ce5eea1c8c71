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
// Each column counts one thing, and the text says which under the table.
// Sources.Latencies (every success's latency) makes the medians, the
// total's among them, span the whole run; Sources.Unfinished adds what a
// checkpoint holds unfinished; Sources.Bytes, Start and End give the run's
// volume and pace.
// Every source is optional: without a breaker the table has no circuit
// columns to fill and shows what the others know. The text form is an
// aligned table for people; columns for rare classes (throttled, blocked,
// gone, other 4xx, robots, dead, pauses, the pace) appear only when some
// domain has one. The JSON form always has every field, for machines, and
// a schema_version (SchemaVersion).
package report
