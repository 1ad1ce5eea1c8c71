package outcome_test

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater/outcome"
)

// tripped is what a breaker says when a domain's circuit is still open.
type tripped struct{}

func (tripped) Judge() outcome.Evidence {
	return outcome.Evidence{Findings: []outcome.Finding{{State: outcome.Tripped, Kind: "circuit_open",
		Reason: "circuit not closed for shop.example", Domains: []string{"shop.example"}}}}
}

// The records written do not make a run complete when a target degraded:
// the ending says so, and the exit code tells the scheduler to reschedule.
func ExampleDecide() {
	o := outcome.Decide(120, tripped{})
	fmt.Println(o.State, o.State.ExitCode(), o.Domains)
	fmt.Println(o.Reason)
	fmt.Println(outcome.Decide(0).State, outcome.Decide(0).State.ExitCode())
	// Output:
	// tripped 2 [shop.example]
	// circuit not closed for shop.example
	// empty 3
}
