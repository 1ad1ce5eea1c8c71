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
// Register says how a request moves from state to state, Resume (or
// QueueStorage, for Colly's queue) what a restart sends again, Config.MaxAttempts
// when a URL that keeps failing is given up on, Observe how a domain's
// circuit outlives a restart, Flush what is durable when, and Judge how the
// run ends. docs/checkpoints.md in the repository walks through a resume.
package checkpoint
