package checkpoint

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
)

// runRecord is one process's run over the checkpoint, as it saves it: the
// first, then one per resume.
type runRecord struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	// Stopped is when Close ended the run; zero for a run that was killed
	// or is still going.
	Stopped time.Time `json:"stopped,omitzero"`
	// Outcome is how the run ended, as SetOutcome recorded it ("" if it
	// was not recorded: killed, or the program did not say).
	Outcome string `json:"outcome,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Records is how many records the run wrote, as SetOutcome recorded
	// it (outcome.Outcome.Records).
	Records int64 `json:"records,omitempty"`
	// Breakers are the domains whose circuit was open when the run was
	// saved.
	Breakers []savedCircuit `json:"breakers,omitempty"`
}

// savedCircuit is one domain's circuit as the checkpoint saves it: an open
// one, so that a restart does not skip its cooldown, or a closed one with
// failures in its window, so that a restart does not forget them.
type savedCircuit struct {
	Domain string `json:"domain"`
	// RetryAt is when an open circuit may be probed; zero for a closed
	// one.
	RetryAt time.Time `json:"retry_at,omitzero"`
	Trips   int       `json:"trips"`
	// Window and Failures are a closed circuit's window at the save: the
	// outcomes it held and the failures among them.
	Window   int `json:"window,omitempty"`
	Failures int `json:"failures,omitempty"`
	// HaltUntil is a Retry-After pause the domain was under: no request
	// to it before then, restart or not.
	HaltUntil time.Time `json:"halt_until,omitzero"`
}

// open reports whether the circuit was saved open.
func (s savedCircuit) open() bool { return !s.RetryAt.IsZero() }

// start begins the run once: it records the run and the format. Under
// cp.mu.
func (cp *Checkpoint) startLocked() {
	if cp.started {
		return
	}
	cp.started = true
	now := cp.now().UTC()
	id := cp.opt.runID
	if id == "" {
		id = fmt.Sprintf("run-%s-%d", now.Format("20060102T150405.000Z"), len(cp.runs)+1)
	}
	cp.runs = append(cp.runs, runRecord{ID: id, Started: now})
	if err := cp.store.SetMeta(keyFormat, []byte(strconv.Itoa(Format))); err != nil {
		cp.failLocked(err)
		return
	}
	cp.writeRunsLocked()
	cp.countEarlierLocked()
	cp.loadLocked()
}

func (cp *Checkpoint) writeRunsLocked() {
	b, err := json.Marshal(cp.runs)
	if err == nil {
		err = cp.store.SetMeta(keyRuns, b)
	}
	cp.failLocked(err)
}

// SetOutcome records how this run ended; Close writes it with the stop
// time.
func (cp *Checkpoint) SetOutcome(o outcome.Outcome) {
	cp.mu.Lock()
	defer cp.unlock()
	cp.startLocked()
	r := &cp.runs[len(cp.runs)-1]
	r.Outcome, r.Reason, r.Records = o.State.String(), o.Reason, o.Records
	if !cp.closed {
		cp.writeRunsLocked()
	}
}

// DeadLetter is a URL given up on, for a person to review.
type DeadLetter struct {
	URL       string    `json:"url"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error"`
	Updated   time.Time `json:"updated"`
}

// DeadLetters returns every dead URL (attempts exhausted, or gone) with
// its last error, in the order the crawl first saw them. The last error
// starts with the class of the attempt that ended it ("degraded: HTTP 503:
// …", "gone: HTTP 404").
func (cp *Checkpoint) DeadLetters() ([]DeadLetter, error) {
	var out []DeadLetter
	err := cp.store.Scan(func(r storage.Record) error {
		out = append(out, DeadLetter{URL: r.URL, Attempts: r.Attempts, LastError: r.LastError, Updated: r.Updated})
		return nil
	}, storage.Dead)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: listing dead URLs: %w", err)
	}
	return out, nil
}

// Counts returns how many URLs are in each state.
func (cp *Checkpoint) Counts() (map[storage.State]int, error) {
	return cp.store.Counts()
}

// openDomainsLocked lists the domains saved open, by domain; all saved,
// closed ones too, with all.
func (cp *Checkpoint) openDomainsLocked(all bool) []savedCircuit {
	var out []savedCircuit
	for _, s := range cp.saved {
		if all || s.open() {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out
}

// countEarlierLocked counts the work earlier runs of the crawl finished:
// the records each wrote, as SetOutcome saved them. A run killed before it
// could say has no count; the URLs finished in the checkpoint stand in for
// it (it had something to crawl, and did some).
func (cp *Checkpoint) countEarlierLocked() {
	killed := false
	for _, r := range cp.runs[:len(cp.runs)-1] {
		cp.earlier += r.Records
		killed = killed || r.Outcome == ""
	}
	if killed {
		err := cp.store.Scan(func(storage.Record) error { cp.earlier++; return nil }, storage.Done)
		cp.failLocked(err)
	}
}
