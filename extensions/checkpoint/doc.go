// Package checkpoint makes a Colly crawl resumable: stopped at any moment
// (tripped, interrupted, killed, crashed), it continues where it stopped,
// loses no URL and fetches no done page again. It keeps a state per URL
// (storage.Record: pending, in flight, done, failed, parked, dead) in any
// storage.Store, and only what is finished counts on a restart.
//
//	st, err := bolt.Open("crawl.db") // the embedded store, one file
//	if err != nil { ... }
//	defer st.Close()                 // after cp.Close
//	cp, err := checkpoint.New(st, checkpoint.Config{})
//	if err != nil { ... }
//	err = breakwater.Use(c, v, b, cp) // cp follows the breaker b
//	dc := c.Clone()                   // a clone, if the scraper has one,
//	err = breakwater.Use(dc, v, b, cp) // is wired too: its URLs resume on it
//	sink, err := cp.Sink(f, checkpoint.SinkConfig{}) // f an *os.File opened os.O_RDWR: each record once (Sink)
//	c.OnHTML("div.product", func(e *colly.HTMLElement) { sink.Write(e.Request, product(e)) })
//	cp.Resume(c)                      // what earlier runs left, each on its collector
//	c.Visit(start)                    // skipped if already known
//	c.Wait(); dc.Wait()
//	cp.SetOutcome(outcome.Decide(records, v, b, cp))
//	cp.Close()
//
// docs/checkpoints.md in the repository walks through a resume.
package checkpoint
