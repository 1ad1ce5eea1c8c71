package checkpoint

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
)

// runRecord is one process's run over the checkpoint, as saved.
type runRecord struct {
	ID       string         `json:"id"`
	Started  time.Time      `json:"started"`
	Stopped  time.Time      `json:"stopped,omitzero"`  // Close's time; zero if killed or running
	Outcome  string         `json:"outcome,omitempty"` // as SetOutcome recorded it; "" if it did not
	Reason   string         `json:"reason,omitempty"`
	Records  int64          `json:"records,omitempty"`  // outcome.Outcome.Records, by SetOutcome
	Breakers []savedCircuit `json:"breakers,omitempty"` // the domains open at the save
}

// savedCircuit is one domain's circuit as saved (open, or with failures).
type savedCircuit struct {
	Domain    string    `json:"domain"`
	RetryAt   time.Time `json:"retry_at,omitzero"` // when an open circuit may be probed; zero if closed
	Trips     int       `json:"trips"`
	Window    int       `json:"window,omitempty"`    // a closed circuit's window: outcomes held,
	Failures  int       `json:"failures,omitempty"`  // and failures among them
	HaltUntil time.Time `json:"halt_until,omitzero"` // a Retry-After pause
}

func (s savedCircuit) open() bool { return !s.RetryAt.IsZero() }

// startLocked begins the run once: it records the run and the format.
func (cp *Checkpoint) startLocked() {
	if cp.started {
		return
	}
	cp.started = true
	now := cp.now().UTC()
	id := cmp.Or(cp.opt.RunID, fmt.Sprintf("run-%s-%d", now.Format("20060102T150405.000Z"), len(cp.runs)+1))
	cp.runs = append(cp.runs, runRecord{ID: id, Started: now})
	if cp.fail(cp.store.SetMeta(keyFormat, []byte(strconv.Itoa(Format)))) != nil {
		return
	}
	cp.writeJSONLocked(keyRuns, cp.runs)
	cp.countEarlierLocked()
	cp.loadLocked()
}

// beginLocked starts the run unless the store failed, whose error it returns.
func (cp *Checkpoint) beginLocked() error {
	if cp.failed() {
		return cp.errNow()
	}
	cp.startLocked()
	return nil
}

// SetOutcome records how this run ended; Close writes it with the stop time.
func (cp *Checkpoint) SetOutcome(o outcome.Outcome) {
	cp.mu.Lock()
	defer cp.unlock()
	cp.startLocked()
	r := &cp.runs[len(cp.runs)-1]
	r.Outcome, r.Reason, r.Records = o.State.String(), o.Reason, o.Records
	if !cp.closed {
		cp.writeJSONLocked(keyRuns, cp.runs)
	}
}

// DeadLetter is a URL given up on, for a person to review.
type DeadLetter struct {
	URL       string    `json:"url"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error"`
	Updated   time.Time `json:"updated"`
}

// DeadLetters returns every dead URL (attempts spent, or gone) in the
// order first seen; LastError starts with the class ("gone: HTTP 404").
func (cp *Checkpoint) DeadLetters() ([]DeadLetter, error) {
	var out []DeadLetter
	if err := cp.flush(true); err != nil {
		return nil, err
	}
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
	if err := cp.flush(true); err != nil {
		return nil, err
	}
	return cp.store.Counts()
}

// openDomainsLocked lists the domains saved open (all saved, with all).
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

// countEarlierLocked counts what earlier runs finished: the records each
// run that ended reported, and, for a run that was killed (it reported
// none), the URLs it settled done, by their time: a listing page is a URL
// done, not a record, and a URL done by a run that ended is not counted
// again.
func (cp *Checkpoint) countEarlierLocked() {
	var killed [][2]time.Time // [started, the next run's start)
	for i, r := range cp.runs[:len(cp.runs)-1] {
		if r.Outcome == "" {
			killed = append(killed, [2]time.Time{r.Started, cp.runs[i+1].Started})
		} else {
			cp.earlier += r.Records
		}
	}
	if len(killed) == 0 {
		return
	}
	err := cp.store.Scan(func(rec storage.Record) error {
		for _, k := range killed {
			if !rec.Updated.Before(k[0]) && rec.Updated.Before(k[1]) {
				cp.earlierURLs++
				break
			}
		}
		return nil
	}, storage.Done)
	cp.fail(err)
}
