package checkpoint

import (
	"errors"

	"github.com/gocolly/colly/v2"
)

// Resume re-issues on c every URL earlier runs left unfinished and
// eligible now (pending, in flight when the process stopped, failed with
// attempts left, parked whose domain may be probed again), in the order
// they were first seen, as first requested: Colly's UnmarshalRequest,
// then Do. Ctx values come back as JSON types (a number is a float64:
// read it with GetAny). A URL in flight at a stop has its attempt given
// back. A done or dead URL is never fetched again (unless RetryDead gave
// it its attempts back).
//
// Call it after Register, before visiting the start URLs, which are then
// skipped if the checkpoint knows them. It returns how many URLs it
// issued. With an Async collector each is a goroutine until fetched; for
// millions use Colly's queue on QueueStorage instead (they share one
// frontier: use one of them). A URL the collector refuses now (a filter,
// MaxDepth, robots.txt) is left as it was, counted in Stats().Refused, and
// not counted unfinished by Judge.
func (cp *Checkpoint) Resume(c *colly.Collector) (int, error) {
	n := 0
	for {
		cp.mu.Lock()
		if cp.err != nil {
			err := cp.err
			cp.unlock()
			return n, err
		}
		cp.startLocked()
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
			// Issued (a synchronous collector returns the fetch's own
			// error here; the callbacks recorded it).
			n++
			continue
		}
		cp.mu.Lock()
		cp.takeTokenLocked(rec.ID) // not consumed: Colly stopped before its revisit check
		cp.stats.Redriven--
		cp.stats.Refused++
		cp.filtered[rec.ID] = struct{}{}
		cp.unlock()
		cp.log.Warn().Str("event", "checkpoint_not_resumed").Str("url", rec.URL).Err(err).
			Msg("checkpoint: the collector refuses this unfinished URL now; it stays in the checkpoint as it was")
	}
}

// refusedByCollector reports an error from Colly's checks before a
// request is made (scrape's requestCheck), as opposed to a fetch error a
// synchronous collector returns from Do.
func refusedByCollector(err error) bool {
	var visited *colly.AlreadyVisitedError
	return errors.Is(err, colly.ErrForbiddenDomain) || errors.Is(err, colly.ErrForbiddenURL) ||
		errors.Is(err, colly.ErrNoURLFiltersMatch) || errors.Is(err, colly.ErrMaxDepth) ||
		errors.Is(err, colly.ErrMaxRequests) || errors.Is(err, colly.ErrRobotsTxtBlocked) ||
		errors.As(err, &visited)
}
