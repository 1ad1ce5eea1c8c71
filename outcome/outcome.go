package outcome

import (
	"fmt"
	"slices"
	"strings"
)

// State is how a run ended.
type State uint8

// The four endings, in increasing order of precedence when several apply.
const (
	Complete State = iota
	Empty
	Tripped
	Error
)

// Usage is the exit code for bad flags or configuration: the run never
// started, so it is not a State.
const Usage = 64

var names = [...]string{"complete", "empty", "tripped", "error"}

// String returns "complete", "empty", "tripped" or "error".
func (s State) String() string {
	if int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler, so a JSON report
// decodes back into an Outcome.
func (s *State) UnmarshalText(b []byte) error {
	i := slices.Index(names[:], string(b))
	if i < 0 {
		return fmt.Errorf("outcome: unknown state %q (want complete, empty, tripped or error)", b)
	}
	*s = State(i)
	return nil
}

// ExitCode is the process exit code for s: 0 complete, 2 tripped, 3 empty,
// 1 error.
func (s State) ExitCode() int {
	if s < Error {
		return [...]int{Complete: 0, Empty: 3, Tripped: 2}[s]
	}
	return 1
}

// Finding is one thing an extension saw that decides the ending.
type Finding struct {
	State State `json:"state"`
	// Kind names the finding for machines: "circuit_open",
	// "selector_broken", "unfinished", "dead", "client_side_suspect",
	// "store_error", "unregistered_collector".
	Kind string `json:"kind"`
	// Reason says it for people.
	Reason string `json:"reason"`
	// Domains are the hosts involved, if any.
	Domains []string `json:"domains,omitempty"`
	// Dead names the URLs given up on, by domain and cause, for a finding
	// of kind "dead".
	Dead []Dead `json:"dead,omitempty"`
}

// Dead is a group of URLs a crawl gave up on after their attempts were
// spent: those of one domain that died of one cause.
type Dead struct {
	Domain string `json:"domain"`
	// Cause is the outcome class of their last attempt with its detail:
	// "degraded (HTTP 503)", "degraded (timeout)", "invalid",
	// "blocked (HTTP 403)".
	Cause string `json:"cause"`
	// URLs is how many died so.
	URLs int `json:"urls"`
	// Samples are a few of them, the first seen first.
	Samples []string `json:"samples"`
}

// Evidence is what one Judge reports.
type Evidence struct {
	Findings []Finding
	// Valid is how many valid pages the judge counted; Counts says whether
	// it counts them at all (a breaker without a validator counts 2xx
	// answers, a validator counts pages that passed its checks).
	Valid  int64
	Counts bool
	// Earlier is how much work earlier runs of the same crawl finished
	// (the records a checkpoint's earlier runs wrote): a run that
	// collected nothing new on top of it finished the work, it did not
	// start from nothing.
	Earlier int64
	// EarlierURLs is how many URLs earlier runs that were killed finished:
	// such a run never reported its records, so its work is counted in
	// URLs (listing pages included), never as records.
	EarlierURLs int64
}

// Judge is implemented by every extension with a say in how a run ended.
type Judge interface {
	Judge() Evidence
}

// Outcome is how a run ended, and why.
type Outcome struct {
	State    State     `json:"state"`
	Reason   string    `json:"reason"`
	Domains  []string  `json:"domains,omitempty"`
	Records  int64     `json:"records"`
	Findings []Finding `json:"findings,omitempty"`
}

// Decide weighs the judges' evidence. records is how many records the
// program wrote, or -1 to let the judges' valid-page counts stand in. A
// crawl that itself failed passes Failed(err) among the judges.
func Decide(records int64, judges ...Judge) Outcome {
	var all []Finding
	valid, counted, earlier, earlierURLs := int64(0), false, int64(0), int64(0)
	for _, j := range judges {
		if j == nil {
			continue
		}
		ev := j.Judge()
		all = append(all, ev.Findings...)
		earlier = max(earlier, ev.Earlier)
		earlierURLs = max(earlierURLs, ev.EarlierURLs)
		if ev.Counts {
			// The strictest counter wins: a validator's valid pages, not
			// the breaker's 2xx answers.
			if !counted || ev.Valid < valid {
				valid = ev.Valid
			}
			counted = true
		}
	}
	if records < 0 {
		records = valid
	}
	o := Outcome{Records: records, Findings: all}
	worst := Complete
	for _, f := range all {
		worst = max(worst, f.State)
	}
	switch {
	case worst > Empty:
		o.State = worst
		var reasons []string
		for _, f := range all {
			if f.State == worst {
				reasons = append(reasons, f.Reason)
				o.Domains = append(o.Domains, f.Domains...)
			}
		}
		slices.Sort(o.Domains)
		o.Domains = slices.Compact(o.Domains)
		o.Reason = strings.Join(reasons, "; ")
	case records == 0 && (earlier > 0 || earlierURLs > 0):
		o.State = Complete
		o.Reason = "work done: nothing new to collect"
		if earlier > 0 {
			o.Reason += fmt.Sprintf("; %d records by earlier runs", earlier)
		}
		if earlierURLs > 0 {
			o.Reason += fmt.Sprintf("; %d URLs done by earlier runs that were killed", earlierURLs)
		}
	case records == 0:
		o.State = Empty
		o.Reason = "ran to the end and collected nothing valid; nothing tripped"
	default:
		o.State = Complete
		o.Reason = fmt.Sprintf("work done: %d records", records)
	}
	return o
}

// Failed is the judge of a crawl that itself failed with err: its finding
// makes the run an error (kind crawl_error). A nil err finds nothing.
func Failed(err error) Judge { return failed{err} }

type failed struct{ err error }

func (f failed) Judge() Evidence {
	if f.err == nil {
		return Evidence{}
	}
	return Evidence{Findings: []Finding{{State: Error, Kind: "crawl_error", Reason: f.err.Error()}}}
}
