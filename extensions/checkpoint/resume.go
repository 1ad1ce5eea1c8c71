package checkpoint

import (
	"errors"
	"fmt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

// Resume re-issues, in the order first seen, every URL earlier runs left
// unfinished and eligible now: pending, in flight at the stop (its attempt
// given back), failed with attempts left, parked whose domain may be
// probed. Each is issued (UnmarshalRequest, then Do) on the collector that
// asked for it, registered in this run under the same name (Register), so
// that its callbacks, a clone's included, see the page; c takes those
// saved with no collector (by an earlier build, or handed to the
// breaker's NotVisited). A URL whose collector is not registered in this
// run is not issued on another: it stays unfinished, counted in
// Stats().Stranded, and Judge names it. Ctx values come back as JSON
// types (read numbers with GetAny). Done and dead URLs are never fetched
// again (but for RetryDead). Call it after registering every collector,
// before the start URLs. It returns how many it issued. For millions of
// URLs use Colly's queue on QueueStorage instead (one frontier: use one).
// A URL the collector refuses now is left as it was, counted in
// Stats().Refused and not by Judge.
func (cp *Checkpoint) Resume(c *colly.Collector) (int, error) {
	if c == nil {
		return 0, errors.New("checkpoint: Resume: nil collector; pass the collector that starts the crawl")
	}
	n := 0
	for {
		rec, ok, err := cp.pop()
		if err != nil {
			return n, err
		}
		if !ok {
			return n, cp.storeErr()
		}
		if cp.redrive(rec, c) {
			n++
		}
	}
}

// redrive issues rec, popped from the frontier, on the collector that
// asked for it (frontier for one saved with none), and reports whether it
// was issued (a sync collector's fetch error was recorded). One that is not
// gives its token back: it stays as it was, refused by the collector now
// or stranded, when the collector that asked for it (owner; "" for one not
// registered) is not registered in this run.
func (cp *Checkpoint) redrive(rec storage.Record, frontier *colly.Collector) bool {
	on, owner, owned := cp.resumer(rec.Request)
	if !owned {
		on = frontier
	}
	var err error
	if on != nil {
		var req *colly.Request
		if req, err = on.UnmarshalRequest(rec.Request); err == nil {
			err = req.Do()
		}
		if err == nil || !refusedByCollector(err) {
			return true
		}
	}
	cp.mu.Lock()
	cp.vmu.Lock()
	cp.takeTokenVisitLocked(rec.ID) // not consumed: Colly stopped before its revisit check
	cp.vmu.Unlock()
	cp.stats.Redriven--
	first := false
	if on == nil {
		cp.stats.Stranded++
		first = !cp.strandLogged[owner]
		cp.strandLogged[owner] = true
	} else {
		cp.stats.Refused++
		cp.filtered[rec.ID] = struct{}{}
	}
	cp.unlock()
	if on != nil {
		cp.opt.Logger.Warn().Str("event", "checkpoint_not_resumed").Str("url", rec.URL).Err(err).
			Msg("checkpoint: the collector refuses this unfinished URL now; it stays in the checkpoint as it was")
	} else if first {
		cp.opt.Logger.Warn().Str("event", "checkpoint_not_resumed").Str("url", rec.URL).Str("collector", owner).
			Msg("checkpoint: " + strandAdvice(owner))
	}
	return false
}

// strandAdvice says why URLs of owner are not resumed and what to do.
func strandAdvice(owner string) string {
	if owner == "" {
		return "URLs asked for by a collector not registered with the checkpoint (a Clone() nobody registered) are left unfinished, not issued on another collector, which has none of its callbacks: " +
			"register the clone with the checkpoint before Resume (breakwater.Use(clone, v, b, cp), or cp.Register(clone)), then hand these to it once with cp.Adopt(clone)"
	}
	return fmt.Sprintf("URLs of the collector registered as %q in an earlier run are left unfinished: no collector has that name in this run; "+
		"register it before Resume, in the same order as then (collectors are named by their order of registration) or under the name cp.Name gave it", owner)
}

// refusedByCollector reports a refusal by Colly's checks, not a fetch error.
func refusedByCollector(err error) bool {
	var visited *colly.AlreadyVisitedError
	return errors.Is(err, colly.ErrForbiddenDomain) || errors.Is(err, colly.ErrForbiddenURL) ||
		errors.Is(err, colly.ErrNoURLFiltersMatch) || errors.Is(err, colly.ErrMaxDepth) ||
		errors.Is(err, colly.ErrMaxRequests) || errors.Is(err, colly.ErrRobotsTxtBlocked) ||
		errors.As(err, &visited)
}
