package main

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater/outcome"
)

// interruptedJudge is the evidence of a run stopped by a signal before its
// work was done. It ends the run as tripped (exit 2): what was collected
// is kept, nothing is wrong with the crawler or the configuration, and the
// rest of the work is for a rescheduled run, exactly as after a trip. An
// error found by another judge still outranks it. A signal that arrives
// when nothing was left to send does not make the run interrupted.
type interruptedJudge struct {
	signal string
	cut    int64
}

func (j interruptedJudge) Judge() outcome.Evidence {
	return outcome.Evidence{Findings: []outcome.Finding{{State: outcome.Tripped, Kind: "interrupted",
		Reason: fmt.Sprintf("stopped by %s before the crawl was done: %d requests or links not sent", j.signal, j.cut)}}}
}
