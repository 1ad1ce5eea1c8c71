package checkpoint

import (
	"errors"

	"github.com/gocolly/colly/v2"
)

// Resume re-issues on c (UnmarshalRequest, then Do), in the order first
// seen, every URL earlier runs left unfinished and eligible now: pending,
// in flight at the stop (its attempt given back), failed with attempts
// left, parked whose domain may be probed. Ctx values come back as JSON
// types (read numbers with GetAny). Done and dead URLs are never fetched
// again (but for RetryDead). Call it after Register, before the start
// URLs. It returns how many it issued. For millions of URLs use Colly's
// queue on QueueStorage instead (one frontier: use one). A URL the
// collector refuses now is left as it was, counted in Stats().Refused and
// not by Judge.
func (cp *Checkpoint) Resume(c *colly.Collector) (int, error) {
	n := 0
	for {
		cp.mu.Lock()
		if err := cp.beginLocked(); err != nil {
			cp.unlock()
			return n, err
		}
		rec, ok := cp.popLocked()
		cp.unlock()
		if !ok {
			return n, cp.storeErr()
		}
		req, err := c.UnmarshalRequest(rec.Request)
		if err == nil {
			err = req.Do()
		}
		if err == nil || !refusedByCollector(err) {
			// Issued (a sync collector's fetch error was recorded).
			n++
			continue
		}
		cp.mu.Lock()
		cp.vmu.Lock()
		cp.takeTokenVisitLocked(rec.ID) // not consumed: Colly stopped before its revisit check
		cp.vmu.Unlock()
		cp.stats.Redriven--
		cp.stats.Refused++
		cp.filtered[rec.ID] = struct{}{}
		cp.unlock()
		cp.opt.Logger.Warn().Str("event", "checkpoint_not_resumed").Str("url", rec.URL).Err(err).
			Msg("checkpoint: the collector refuses this unfinished URL now; it stays in the checkpoint as it was")
	}
}

// refusedByCollector reports a refusal by Colly's checks, not a fetch error.
func refusedByCollector(err error) bool {
	var visited *colly.AlreadyVisitedError
	return errors.Is(err, colly.ErrForbiddenDomain) || errors.Is(err, colly.ErrForbiddenURL) ||
		errors.Is(err, colly.ErrNoURLFiltersMatch) || errors.Is(err, colly.ErrMaxDepth) ||
		errors.Is(err, colly.ErrMaxRequests) || errors.Is(err, colly.ErrRobotsTxtBlocked) ||
		errors.As(err, &visited)
}
