package checkpoint

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
)

// Judge reports for the run's outcome, after Wait: a failed store is an
// error ("store_error"), URLs dead of failures too ("dead", by domain and
// cause in Finding.Dead) until RetryDead; unfinished URLs trip the run
// ("unfinished"), except those the collector refused to resume.
// Evidence.Earlier and EarlierURLs are what earlier runs finished, so a
// resume with nothing new ends complete, not empty.
func (cp *Checkpoint) Judge() outcome.Evidence {
	cp.mu.Lock()
	cp.release(true)
	_ = cp.flush(true) // an error is the store's, below
	serr, filtered, ev := cp.errNow(), maps.Clone(cp.filtered), outcome.Evidence{Earlier: cp.earlier, EarlierURLs: cp.earlierURLs}
	cp.unlock()
	if serr != nil {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "store_error", Reason: serr.Error()})
		return ev
	}
	perDomain := map[string]map[storage.State]int{}
	total := 0
	dead := deadTally{groups: map[[2]string]*outcome.Dead{}}
	err := cp.store.Scan(func(r storage.Record) error {
		if _, ok := filtered[r.ID]; ok {
			return nil
		}
		d := domainOf(r.URL)
		if r.State == storage.Dead {
			dead.add(d, r)
			return nil
		}
		if perDomain[d] == nil {
			perDomain[d] = map[storage.State]int{}
		}
		perDomain[d][r.State]++
		total++
		return nil
	}, append(unfinished[:len(unfinished):len(unfinished)], storage.Dead)...)
	if err != nil {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "store_error",
			Reason: fmt.Sprintf("%v: reading the checkpoint: %v", ErrStore, err)})
		return ev
	}
	if f, ok := dead.finding(cp.opt.MaxAttempts); ok {
		ev.Findings = append(ev.Findings, f)
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
