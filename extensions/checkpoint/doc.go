// Package checkpoint makes a Colly crawl resumable: stopped at any moment
// (tripped by a breaker, interrupted, killed with SIGKILL, crashed), it
// continues where it stopped, loses no URL and fetches no done page again.
//
// Colly marks a URL visited before it fetches it, and its queue pops
// entries destructively, so a visited set persisted as-is loses every URL
// that was in flight, refused or failed when the process stopped. The
// checkpoint keeps a state per URL instead (storage.Record: pending, in
// flight, done, failed, parked, dead, with attempts, last error and the
// request itself), and only what is finished counts on a restart.
//
//	st, err := bolt.Open("crawl.db")       // the embedded store, one file
//	if err != nil { ... }                  // names the file and what to do
//	defer st.Close()                       // after cp.Close
//	cp, err := checkpoint.New(st)
//	if err != nil { ... }
//	b, _ := breaker.New(breaker.Standard())
//	err = breakwater.Use(c, v, b, cp)      // cp follows b; domains saved open re-open
//	cp.Resume(c)                           // what earlier runs left
//	c.Visit(start)                         // skipped if already known
//	c.Wait()
//	o := outcome.Decide(records, v, b, cp)
//	cp.SetOutcome(o)
//	cp.Close()
//
// Any storage.Store will do: storage/bolt (above) for one machine,
// storage/redis across machines, storage/memory for a crawl that needs no
// resume. The checkpoint package itself imports none of them.
//
// # What Colly sees
//
// The checkpoint is the collector's storage.Storage (Register calls
// SetStorage) and may be the storage of Colly's queue (QueueStorage), so
// a crawl written for Colly's queue becomes resumable by giving the queue
// that storage. Within a run it
// deduplicates as Colly does: a URL requested once is visited, and one
// that two goroutines find at the same moment is requested by one of them
// (Colly checks and marks in two calls; the second caller's mark returns
// a colly.AlreadyVisitedError, which stops its request). After a
// restart a URL is visited if the checkpoint knows it at all: a done or
// dead one is never fetched again, and one left unfinished is fetched by
// the frontier (Resume, or the queue), not by a link that finds it again.
//
// # Lifecycle
//
//	what happened                           state after           attempts
//	Colly hands the request to OnRequest    pending               —
//	it leaves (OnRequestHeaders, after the  in flight             +1
//	breaker's gate)
//	success (validated, with a breaker)     done                  —
//	degraded, invalid, blocked, other 4xx   failed; dead of       —
//	                                        failures once
//	                                        attempts ≥ MaxAttempts
//	the same while the domain's circuit     failed; parked until  set to
//	is not closed                           RetryAt once          MaxAttempts−1
//	                                        attempts ≥ MaxAttempts
//	the domain's circuit opens: its URLs    parked until RetryAt  set to
//	dead of failures since its last                               MaxAttempts−1
//	success, in this run
//	gone (404, 410)                         dead, gone            —
//	RetryDead (dead of failures only)       pending               reset to 0
//	throttled, the breaker sends it again   pending               given back
//	throttled past the breaker's budget     failed                given back
//	refused by the breaker (never sent)     parked until RetryAt  —
//	stopped before it left, or cancelled    pending               given back
//	a redirect to a page already visited    done                  —
//
// With a breaker (Observe, which breakwater.Use calls) the breaker's classified outcome
// decides, after validation; without one, OnScraped is success and
// OnError is classified by breaker.Classify.
//
// # Resume
//
// Resume (or Colly's queue, over QueueStorage) re-issues, in the order
// they were first seen: pending URLs, URLs in flight when the process
// stopped (their attempt is given back: a crash says nothing about the
// page), failed URLs with attempts left, and parked URLs whose time has
// come and whose domain is not saved open. Each goes out with the request
// that was saved (method, body, depth, headers, Ctx values JSON can hold,
// which come back as JSON types: a number is a float64, so read it with
// GetAny). A parked URL whose domain is still cooling down stays parked,
// and so does the run's outcome: tripped.
//
// A domain's failure history survives a restart. The breaker's open
// domains are saved when they open (and with the run at Close); Breaker
// re-opens them until their saved RetryAt, so a restart is not a way
// around a cooldown. One whose cooldown ended while the crawl was stopped
// comes back on probation (a full window one failure short of a trip:
// its first failure re-opens it, as a failed half-open probe would). A
// closed circuit whose window held failures at Close gets them back
// (Breaker.Restore). So a resume into a site still failing trips as
// fast as an uninterrupted run would, and spends no more attempts. (A
// killed run saves the open circuits only.)
//
// # Durability
//
// Every state change is one Put to the store. On the embedded store
// (storage/bolt) Puts are buffered and committed in one atomic bbolt
// transaction every 50 ms, or every 10,000 writes, and fsynced: a change
// is durable once the next commit has ended (about 50 ms), or when Flush
// or Close returns. A process killed at any moment leaves the file as of
// its last commit: every record whole, nothing half-written. What a kill
// can cost is the last 50 ms: requests that were in flight, or done but
// not yet committed, are fetched again on resume. A done page is never
// fetched again once its done state is committed.
//
// Links found on a page are recorded before the page is done: a page's done record waits until the links Colly marked
// visited while it was processed have reached OnRequest and been
// recorded, so on disk no page is done without its links. A hop of a
// redirect chain is marked visited and never requested; one that has not
// been seen after the grace period (WithGrace, 10 s) stops the wait.
//
// If the store fails (disk full, read-only file system), the error is
// kept: OnStoreError hooks are told once, every new request is aborted
// (it could not be recorded), Judge says error, and everything committed
// before the failure is intact.
//
// # Outcome
//
// Judge reports a store that failed as an error (kind store_error), URLs
// dead of failures as an error (kind dead), and URLs left unfinished
// (pending, in flight, parked, failed with attempts left) as tripped
// (kind unfinished): the checkpoint holds them, a rescheduled run resumes.
//
// A URL that failed (5xx, timeout, invalid page, 403, another 4xx) is
// tried again by each resume until its attempts (MaxAttempts, 3) are
// spent; then it is dead of failures, and every run over the checkpoint
// ends as an error naming such URLs by domain and cause, with samples
// (outcome.Finding.Dead), until a person decides: RetryDead gives them
// their attempts back once the cause is fixed or the site is back.
//
// A URL is dead of failures only when it fails while its site otherwise
// works. An outage is the breaker's to report (the run ends tripped, and
// a rescheduled run resumes), not a person's: a site that starts failing
// makes a retry loop (breaker.RetryOnError) spend a few URLs' attempts
// back to back in the moments before its circuit trips. So when a
// domain's circuit opens (a trip, or a failed half-open probe), every URL
// of that domain that died of failures in this run since its last success
// (the last success of an attempt that left after the URL died) is
// parked instead, until the circuit may be probed again, with
// MaxAttempts−1 attempts: the next run gives it one more try. A URL whose
// attempts run out while its domain's circuit is not closed (a probe, an
// attempt under way when the circuit opened) is parked the same way. With
// a logger, each domain's revival is one event (checkpoint_outage_revived,
// with how many URLs). The checkpoint remembers up to 4096 such URLs per
// domain between two successes; a URL that died past that stays dead
// (the event counts it as forgotten), for RetryDead. Without a breaker
// there are no circuits, and a URL dies when its attempts are spent.
//
// A 404 or 410 is dead at once, and fine: the page does not exist. A URL the
// collector refuses to resume (its filters, MaxDepth, robots.txt) is the
// user's choice and counts as neither. Each record's last error starts
// with its attempt's class ("degraded: HTTP 503: …"). DeadLetters lists
// what was given up on, with the last error, for a person to review. Runs
// lists every run over the checkpoint with its start, stop, outcome and
// open domains.
//
// # Caveats
//
// Register the checkpoint after the breaker (breakwater.Use(c, v, b, cp)),
// so that it sees a refusal before its own OnRequest. Colly's Clone copies
// no callbacks: Register every clone. SetStorage gives the collector a
// cookie jar over the checkpoint (cookies are saved too), which undoes an
// earlier DisableCookies. A request whose body is not an io.ReadSeeker
// cannot be saved to be re-issued. With an Async collector each resumed
// URL is a goroutine until fetched, as each c.Visit is; for frontiers of
// millions, use Colly's queue over cp.QueueStorage().
package checkpoint
