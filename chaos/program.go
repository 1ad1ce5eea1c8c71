package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// A program case draws a user's PROGRAM (where its callbacks live) and a
// RUN SEQUENCE (the processes it runs as, one after the other, and what
// happens to each), instead of Colly features and a fault. Each run is a
// process of its own: this binary started again as the program
// (childMain), on the case's stores, its checkpoint file, its output and
// its cache directory, which outlive the process as a user's do.

// Shape is where a program's callbacks live.
type Shape int

const (
	shPlain      Shape = iota // listing and product callbacks on one collector
	shCloneOnly               // products through detail := c.Clone(), whose title callback exists only on the clone
	shCtxChain                // listing → product through e.Request.Visit, the listing's Ctx value read by the product callback
	shReqErr                  // the user's OnRequest puts a start time in the Ctx that its OnError reads
	shRetryCache              // a CacheDir and an OnError that removes the request's cache file, then r.Retry(), 3 times
	shPanic                   // a product callback panics at the PanicAt-th product of the first run
	shXML                     // products read by OnXML (XPath), listings by OnHTML
	shapeCount
)

var shapeNames = [...]string{"plain", "clone-only", "ctx-chain", "req-err", "retry-cache", "panic", "xml"}

func (s Shape) String() string { return shapeNames[s] }

// SeqKind is a program's run sequence.
type SeqKind int

const (
	sqOnce      SeqKind = iota // one run, rerun until done if it did not end complete
	sqTripHeal                 // stores fail, the run trips; the stores heal; rerun until done
	sqCPDeleted                // run until done with a CacheDir; the checkpoint deleted (a new crawl: the output moved aside); run again on the warm cache until done
	sqRerunDone                // run until done; one more run with --resume after "complete"
	sqKill                     // SIGKILL At into the first run, or in the middle of writing its MidWrite-th product; rerun until done
	sqQuit                     // SIGQUIT At into the first run; rerun until done
	sqTerm                     // SIGTERM At into the first run; rerun until done
	seqCount
)

var seqNames = [...]string{"once", "trip-heal", "cp-deleted", "rerun-done", "sigkill", "sigquit", "sigterm"}

func (s SeqKind) String() string { return seqNames[s] }

// maxReruns is how many reruns "rerun until done" makes at most after the
// run that was disturbed: a healed fleet must end complete within them.
const maxReruns = 3

// Program is a program case's program and run sequence.
type Program struct {
	Shape Shape
	Async bool
	Seq   SeqKind
	At    time.Duration // sqKill, sqQuit, sqTerm: the signal's time into the first run
	// FromStart counts At from the program's run beginning (its "run
	// started" line) instead of from the process starting: a test whose
	// judgement needs the signal to reach the run, on a loaded machine.
	FromStart bool `json:",omitempty"`
	MidWrite  int  // sqKill: > 0: killed instead in the middle of writing its MidWrite-th product
	PanicAt   int  // shPanic: the first run's PanicAt-th product callback panics
	CacheDir  bool // colly.CacheDir (always with shRetryCache and sqCPDeleted)
	// Cooldown is the profile's, shortened so that a rerun after a trip
	// can probe the healed stores within the case; a rerun after a tripped
	// run waits MaxCooldown first, as a scheduler waits the retry_at.
	Cooldown time.Duration
}

// maxCooldown is the program's profile's MaxCooldown.
func (p Program) maxCooldown() time.Duration { return 4 * p.Cooldown }

func (p Program) String() string {
	parts := []string{"shape=" + p.Shape.String(), "seq=" + p.Seq.String()}
	if p.Async {
		parts = append(parts, "async")
	} else {
		parts = append(parts, "sync")
	}
	if p.CacheDir {
		parts = append(parts, "cachedir")
	}
	switch {
	case p.Seq == sqKill && p.MidWrite > 0:
		parts = append(parts, fmt.Sprintf("midwrite=%d", p.MidWrite))
	case p.Seq == sqKill || p.Seq == sqQuit || p.Seq == sqTerm:
		parts = append(parts, "at="+p.At.String())
	}
	if p.Shape == shPanic {
		parts = append(parts, fmt.Sprintf("panic@%d", p.PanicAt))
	}
	parts = append(parts, "cooldown="+p.Cooldown.String())
	return "program(" + strings.Join(parts, ",") + ")"
}

// profile is the program's breaker profile: w's, with the short cooldown.
func (p Program) profile(w Wiring) breaker.Profile {
	pr := w.Profile
	pr.Cooldown, pr.MaxCooldown = p.Cooldown, p.maxCooldown()
	return pr
}

// drawProgram draws a program case's program, run sequence and stores
// from the case's fifth stream: small stores, healthy, but under
// sqTripHeal where one or two fail from the start or early on, until the
// sequence heals them.
func drawProgram(d draw) (Program, []Site) {
	p := Program{
		Shape:    Shape(d.pick(2, 3, 2, 2, 2, 2, 2)),
		Async:    d.chance(0.7),
		Seq:      SeqKind(d.pick(2, 3, 2, 2, 3, 2, 2)),
		At:       d.ms(40, 300),
		Cooldown: d.ms(150, 400),
	}
	p.CacheDir = p.Shape == shRetryCache || p.Seq == sqCPDeleted || d.chance(0.2)
	if p.Seq == sqKill && d.chance(0.5) {
		p.MidWrite = d.intn(1, 6)
	}
	if p.Shape == shPanic {
		p.PanicAt = d.intn(1, 5)
	}
	var sites []Site
	n := d.intn(1, 3)
	for i := range n {
		s := Site{Kind: kHealthy, Products: d.intn(3, 25), PerPage: []int{3, 5, 10}[d.r.IntN(3)], Latency: d.ms(0, 10)}
		if p.Seq == sqTripHeal && (i == 0 || d.chance(0.4)) {
			s.Kind = []Kind{kDegrade, kTruncated, kHangStart}[d.pick(5, 3, 1)]
			s.After = d.intn(0, 8)
			s.Hold = 3 * time.Second
		}
		sites = append(sites, s)
	}
	return p, sites
}

// programBound is how long one run of a program case may take (invariant
// 1): its pages at their latency, one at a time, and the trips.
func (c Case) programBound() time.Duration {
	w := c.Wiring
	need := time.Duration(w.Profile.Settings().FailuresToTrip())
	total := 5 * time.Second
	for _, s := range c.Sites {
		pages := time.Duration(s.Products + s.Products/max(1, s.PerPage) + 2)
		total += pages * (s.Latency + 15*time.Millisecond)
		if s.Kind != kHealthy {
			total += need * w.Timeout * 4 // a retry-cache loop sends each failure again thrice
		}
	}
	return total * 3 / 2
}
