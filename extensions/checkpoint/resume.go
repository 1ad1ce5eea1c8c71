package checkpoint

import (
	"errors"

	"github.com/gocolly/colly/v2"
)

// Resume re-issues on c, through Colly's usual path, every URL earlier
// runs left unfinished and eligible now: pending, in flight when the
// process stopped, failed with attempts left, and parked whose domain may
// be probed again. Each goes out as it was first requested (method, body,
// depth, headers and JSON-safe Ctx values: Colly's UnmarshalRequest, then
// Do; Do's revisit check lets a resumed URL through once, and refuses it
// to every other path). Ctx values come back as JSON types: a number is a
// float64, so read it with GetAny. They go out in the order they were first
// seen; a URL in flight when the process stopped has its attempt given
// back, since a crash says nothing about the page. A done or dead URL is
// never fetched again (unless
// RetryDead, called before, gave a dead one its attempts back). A
// parked URL whose domain is still cooling down stays parked, and Judge
// says the run is unfinished.
//
// Call it after Register (and Breaker), before visiting the start URLs,
// which are then skipped if the checkpoint already knows them. It returns
// how many URLs it issued. With an Async collector each is a goroutine
// until it is fetched, as every c.Visit is; for a frontier of millions
// use Colly's queue with the checkpoint as its storage, which hands them
// out a few at a time. Resume and the queue share one frontier: use one
// of them.
//
// A URL the collector refuses now (a filter, MaxDepth or AllowedDomains
// changed since, robots.txt) is left as it was and counted in
// Stats().Refused; Judge does not count it unfinished: a resume would
// refuse it again.
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
		if t := cp.tokens[rec.ID]; t > 0 { // not consumed: Colly stopped before its revisit check
			if t == 1 {
				delete(cp.tokens, rec.ID)
			} else {
				cp.tokens[rec.ID] = t - 1
			}
		}
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
