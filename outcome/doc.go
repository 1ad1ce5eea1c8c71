// Package outcome decides how a crawl ended, so that nobody has to read
// logs to find out: complete, tripped, empty and error never look alike.
//
//	exit  state     meaning
//	0     complete  work done, records written
//	2     tripped   a target degraded; progress saved; reschedule without a human
//	3     empty     ran to the end, nothing valid collected, nothing tripped
//	1     error     our bug, a broken environment, URLs whose attempts are
//	                spent: retrying fails the same way, a person decides
//	64    usage     bad flags or configuration (decided before the crawl starts)
//
// Each extension that has an opinion implements Judge: the breaker reports
// domains left open, the validator a template that changed under the
// selectors (selector_broken, an error: a human must look, rescheduling will
// not help), the checkpoint URLs left unfinished (tripped) and URLs dead of
// failures (an error, named by domain and cause in Finding.Dead; a 404 is
// not a failure). Decide weighs their
// evidence: an error outranks a trip, a trip outranks an empty run.
package outcome
