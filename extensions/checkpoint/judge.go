package checkpoint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
)

// Judge reports for the run's outcome, after Wait: a failed store is an
// error ("store_error"), URLs dead of failures too ("dead", by domain and
// cause in Finding.Dead) until RetryDead, and so are unfinished URLs of a
// collector not registered in this run ("unregistered_collector": no run
// resumes them until the program registers it); other unfinished URLs
// trip the run ("unfinished"), except those the collector refused to
// resume. Evidence.Earlier and EarlierURLs are what earlier runs
// finished, so a resume with nothing new ends complete, not empty.
func (cp *Checkpoint) Judge() outcome.Evidence {
	cp.mu.Lock()
	cp.release(true)
	cp.reviveAtEndLocked()
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
	stranded := map[string]*strandTally{} // by owner: unfinished, and no collector in this run to resume them on
	err := cp.store.Scan(func(r storage.Record) error {
		if _, ok := filtered[r.ID]; ok {
			return nil
		}
		d := domainOf(r.URL)
		if r.State == storage.Dead {
			dead.add(d, r)
			return nil
		}
		if on, owner, owned := cp.resumer(r.Request); owned && on == nil {
			st := stranded[owner]
			if st == nil {
				st = &strandTally{example: r.URL, domains: map[string]bool{}}
				stranded[owner] = st
			}
			st.n++
			st.domains[d] = true
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
	for _, owner := range slices.Sorted(maps.Keys(stranded)) {
		st := stranded[owner]
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "unregistered_collector",
			Reason:  fmt.Sprintf("%d URLs saved unfinished, e.g. %s: %s", st.n, st.example, strandAdvice(owner)),
			Domains: slices.Sorted(maps.Keys(st.domains))})
	}
	if total == 0 {
		return ev
	}
	var parts []string
	for d, m := range perDomain {
		var ss []string
		for _, st := range unfinished {
			if m[st] > 0 {
				ss = append(ss, fmt.Sprintf("%d %s", m[st], st))
			}
		}
		parts = append(parts, d+": "+strings.Join(ss, ", "))
	}
	slices.Sort(parts)
	ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "unfinished",
		Reason:  fmt.Sprintf("%d URLs saved unfinished in the checkpoint for the next run (%s)", total, strings.Join(parts, "; ")),
		Domains: slices.Sorted(maps.Keys(perDomain))})
	return ev
}

// strandTally counts the unfinished URLs of one collector not registered.
type strandTally struct {
	n       int
	example string
	domains map[string]bool
}
