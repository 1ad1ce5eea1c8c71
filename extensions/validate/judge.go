package validate

import "github.com/breakwater-crawl/breakwater/outcome"

// Judge reports, for the run's outcome, every domain diagnosed
// selector_broken as an error (a human must look; rescheduling fails the
// same way), so the run ends as an error (exit 1) rather than as tripped
// (exit 2). It counts only the pages that passed validation as the run's
// valid pages, so a crawl that collected nothing but consent shells ends
// empty, not complete.
func (v *Validator) Judge() outcome.Evidence {
	ev := outcome.Evidence{Valid: v.diag.validPages(), Counts: true}
	for _, b := range v.Broken() {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "selector_broken",
			Reason: b.Err().Error(), Domains: []string{b.Domain}})
	}
	return ev
}
