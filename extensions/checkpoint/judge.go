package checkpoint

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
)

// Judge reports, for the run's outcome (call it after the collector's
// Wait): a store that failed is an error (kind "store_error": a full disk
// stays full on the next run), and URLs left unfinished (pending, in
// flight, parked, failed with attempts left) make the run tripped (kind
// "unfinished": the checkpoint holds them, a resume does the rest). It
// counts no pages.
func (cp *Checkpoint) Judge() outcome.Evidence {
	cp.mu.Lock()
	cp.releaseAllLocked()
	serr := cp.err
	cp.unlock()
	var ev outcome.Evidence
	if serr != nil {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "store_error", Reason: serr.Error()})
		return ev
	}
	perDomain := map[string]map[storage.State]int{}
	total := 0
	err := cp.store.Scan(func(r storage.Record) error {
		d := "?"
		if u, err := url.Parse(r.URL); err == nil {
			d = breaker.HostOf(u.Host)
		}
		if perDomain[d] == nil {
			perDomain[d] = map[storage.State]int{}
		}
		perDomain[d][r.State]++
		total++
		return nil
	}, unfinished...)
	if err != nil {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "store_error",
			Reason: fmt.Sprintf("%v: reading the checkpoint: %v", ErrStore, err)})
		return ev
	}
	if total == 0 {
		return ev
	}
	var doms, parts []string
	for d, m := range perDomain {
		doms = append(doms, d)
		var ss []string
		for _, st := range unfinished {
			if m[st] > 0 {
				ss = append(ss, fmt.Sprintf("%d %s", m[st], st))
			}
		}
		parts = append(parts, d+": "+strings.Join(ss, ", "))
	}
	sort.Strings(doms)
	sort.Strings(parts)
	ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "unfinished",
		Reason:  fmt.Sprintf("%d URLs saved unfinished in the checkpoint for the next run (%s)", total, strings.Join(parts, "; ")),
		Domains: doms})
	return ev
}
