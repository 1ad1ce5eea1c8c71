package main

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// Violation is one invariant broken by one case. Inv is the invariant's
// number in the README's list (1..8), 9 for the user's transport bypassed, 0 for a
// case that proves nothing (no request reached any store) or could not run.
type Violation struct {
	Inv int
	Msg string
}

func (v Violation) String() string { return fmt.Sprintf("inv%d: %s", v.Inv, v.Msg) }

// retryAfterSlack is how far from a 429's answer a request may still be
// one that left before the answer arrived, or how early it may be after
// the pause by rounding.
const retryAfterSlack = 300 * time.Millisecond

// ok reports whether a hit was answered with the page, whole and valid.
func ok(h testserver.Hit) bool { return h.Mode == testserver.Healthy && h.Status == 200 }

// gone reports whether a hit was a 404 or 410 answered whole: not a
// failure (a cut one is: the breaker counts the cut).
func gone(h testserver.Hit) bool {
	return (h.Status == 404 || h.Status == 410) && h.Mode != testserver.Truncated
}

// promisedPaths are the paths of a store the crawl was told about by the
// store itself: the start page, and the links of every listing page it
// served healthy (products of the catalogue and the next page).
func promisedPaths(s Site, hits []testserver.Hit) []string {
	out, _ := promised(s, hits)
	return out
}

// promised is promisedPaths with, for each path, the listing pages that
// linked to it.
func promised(s Site, hits []testserver.Hit) ([]string, map[string][]string) {
	cat := testserver.Catalog{Products: s.Products, PerPage: s.PerPage}
	seen := map[string]bool{"/": true}
	parents := map[string][]string{}
	for _, h := range hits {
		if !ok(h) || !isListing(h.Path) {
			continue
		}
		p := pageOf(h.Path)
		if p < 1 || p > cat.ListingPages() {
			continue
		}
		link := func(path string) {
			seen[path] = true
			if !slices.Contains(parents[path], h.Path) {
				parents[path] = append(parents[path], h.Path)
			}
		}
		for n := (p-1)*s.PerPage + 1; n <= min(p*s.PerPage, cat.Len()); n++ {
			link(testserver.ProductPath(n))
		}
		if p < cat.ListingPages() {
			link(testserver.ListingPath(p + 1))
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, parents
}

// promisedURLs are the promised product URLs of every store as the crawler
// names them, from the stores' logs as they are now.
func (cr *caseRun) promisedURLs() []string {
	var out []string
	for _, s := range cr.sites {
		for _, p := range promisedPaths(s.Site, s.store.Requests()) {
			out = append(out, s.url+p)
			if ru := cr.redirected(s, p); ru != "" {
				out = append(out, ru)
			}
		}
	}
	return out
}

// redirected is the URL the scraper visited for path p of s through the
// redirecting host (Wiring.Redirect: product links), or "".
func (cr *caseRun) redirected(s *site, p string) string {
	if cr.redir == nil || !strings.HasPrefix(p, "/products/") {
		return ""
	}
	return cr.redir.link(s.url + p)
}

// refusedByColly is Colly's answer to a Visit of u in some run (its
// error's text), or "".
func (cr *caseRun) refusedByColly(u string) string {
	for _, r := range cr.runs {
		if e := r.refusedByColly[u]; e != "" {
			return e
		}
	}
	return ""
}

// timedOut is how many requests for u the client's own Client.Timeout
// ended, over the runs.
func (cr *caseRun) timedOut(u string) int {
	n := 0
	for _, r := range cr.runs {
		n += r.timedOut[u]
	}
	return n
}

// pastDepth reports whether Colly refused u as past MaxDepth: the scraper
// chose not to fetch it, so it is not work left.
func (cr *caseRun) pastDepth(u string) bool {
	return cr.refusedByColly(u) == colly.ErrMaxDepth.Error()
}

// capped reports whether Colly refused a URL of store s by one of the
// limits errs (MaxDepth, MaxRequests): then the store is not crawled whole
// by the user's choice (invariant 7), and the ending must name what
// MaxRequests left (invariants 3, 4), which may name the store.
func (cr *caseRun) capped(s *site, errs ...error) bool {
	for _, r := range cr.runs {
		for u, e := range r.refusedByColly {
			if !strings.HasPrefix(u, s.url+"/") {
				continue
			}
			for _, err := range errs {
				if e == err.Error() {
					return true
				}
			}
		}
	}
	return false
}

// stateLostEverywhere reports a Redis case whose Redis came back empty
// and whose every worker ended in error saying the crawl's shared state
// was lost. Such a crawl may have written a product twice: a worker that
// joined the emptied Redis before another found the loss took it for a
// new crawl until it was told. Its ending says the results cannot be
// trusted, which is the promise; invariant 2 and the "nothing requested"
// check do not apply to it. (Its ending is still judged by invariant 4.)
func (cr *caseRun) stateLostEverywhere() bool {
	f := cr.c.Fault
	if f.Kind != fRedisRestart || f.Persist || len(cr.runs) == 0 {
		return false
	}
	for _, r := range cr.runs {
		if !saidLost(r) {
			return false
		}
	}
	return true
}

// saidLost reports a run that ended in error saying the crawl's shared
// state was lost.
func saidLost(r runOut) bool {
	for _, fd := range r.outcome.Findings {
		if fd.Kind == "state_lost" {
			return r.exit == 1
		}
	}
	return false
}

// secondCrawl reports a case whose late worker (Fault.Late) started a
// crawl of its own: every other worker had ended before it started, none
// having found Redis lost (they had all but finished), so nothing was left
// to tell it the crawl had been run, and it ran it again, as designed. The case judges the first crawl: the late worker's run,
// products and requests are left out (executeRedis, runCase).
func (cr *caseRun) secondCrawl() bool { return cr.second }

// check judges the case against every invariant.
func (cr *caseRun) check() []Violation {
	var vs []Violation
	add := func(inv int, format string, a ...any) {
		vs = append(vs, Violation{inv, fmt.Sprintf(format, a...)})
	}
	w, f := cr.c.Wiring, cr.c.Fault

	total := 0
	for _, h := range cr.hits {
		total += len(h)
	}
	lostState := cr.stateLostEverywhere()
	// With more proxies failing than the pool may eject, a request may
	// reach no store: the case judges the ending and the URLs kept.
	if total == 0 && !lostState && !w.proxiesClientSide() {
		add(0, "no store received a request: the case proves nothing")
	}
	for i, r := range cr.runs {
		// A resume over a corrupted checkpoint that failed is invariant
		// 8's business.
		if r.openErr != nil && !r.refused && !(cr.corrupted && i == len(cr.runs)-1) {
			add(0, "run %d could not run: %v", i+1, r.openErr)
		}
	}

	// 4, for a worker started after Redis came back empty (Fault.Late):
	// once every other worker has ended saying the state was lost, it must
	// not take the emptied Redis for a new crawl: it ends in error saying
	// so, having written nothing.
	if n := len(cr.runs); f.Late && n >= 2 && !cr.secondCrawl() {
		late, told := cr.runs[n-1], true
		for _, r := range cr.runs[:n-1] {
			told = told && saidLost(r) && r.end.Before(late.start)
		}
		if told && (!saidLost(late) || late.outcome.Records > 0) {
			add(4, "a worker started after every other had ended saying the crawl's state was lost ended exit %d (%s) with %d products written, want exit 1 saying the state was lost and nothing written",
				late.exit, late.outcome.Reason, late.outcome.Records)
		}
	}

	// 1. The crawl ends within its bound.
	for i, r := range cr.runs {
		if r.hung {
			add(1, "run %d did not end within %v (Wait never returned); torn down", i+1, cr.bound)
		}
	}
	hung := slices.ContainsFunc(cr.runs, func(r runOut) bool { return r.hung })

	// 4, for a crash: a run that crashed says so (error), never complete,
	// tripped or empty, which a scheduler acts on without a human.
	for i, r := range cr.runs {
		if r.crashed && r.exit >= 0 && r.exit != 1 {
			add(4, "run %d crashed (SIGQUIT) and exited %d, not 1 (error)", i+1, r.exit)
		}
	}

	// 8. A corrupt or foreign checkpoint is refused, its bytes unchanged.
	if cr.corrupted {
		r := cr.final
		refused := r.refused || (w.Process && r.exit != 0 && r.exit != 2 && r.exit != 3 && r.exit != -1)
		if !refused {
			add(8, "the %s checkpoint was not refused: the resume ran and ended with exit %d", f.Corruption, r.exit)
		}
		if cr.hashAfter != cr.hashBefore {
			add(8, "the %s checkpoint's bytes changed during the resume", f.Corruption)
		}
	}

	// Per store: what was promised, what became of each path.
	written := map[string]int{}
	for _, u := range cr.out {
		written[u]++
	}
	// 2. No product written twice.
	var dups []string
	for u, n := range written {
		if n > 1 {
			dups = append(dups, fmt.Sprintf("%s×%d", u, n))
		}
	}
	// With AllowURLRevisit Colly asks no storage whether a URL was
	// visited, so a resumed scraper that revisits on purpose fetches again
	// what it finds (its own set of links seen died with the first run):
	// written again across the runs by the user's choice, not the library's.
	revisitResumed := cr.c.Wiring.Revisits > 0 && len(cr.runs) > 1
	if len(dups) > 0 && !lostState && !revisitResumed {
		sort.Strings(dups)
		add(2, "%d products written more than once: %s", len(dups), sample(dups))
	}

	cutShort := f.cutShort()
	final := cr.final
	var unfinished []string // across stores: "host path why"
	healthyStore := false
	for i, s := range cr.sites {
		hits := cr.hits[i]
		last := map[string]testserver.Hit{}
		okCount := map[string]int{}
		for _, h := range hits {
			last[h.Path] = h
			if ok(h) {
				okCount[h.Path]++
			}
		}
		// 2, from the log: no page fetched whole twice in one run (a
		// kill may cost a page fetched again, not written again).
		if f.Kind != fKill && f.Kind != fCorrupt && f.Kind != fQuit && f.Kind != fDiskFull && !lostState {
			var twice []string
			for p, n := range okCount {
				// A page the client timed out on may have been served
				// whole and never read: fetched again, it is not twice.
				if n > 1+cr.timedOut(s.url+p) && strings.HasPrefix(p, "/products/") {
					twice = append(twice, fmt.Sprintf("%s×%d", p, n))
				}
			}
			if len(twice) > 0 {
				sort.Strings(twice)
				add(2, "store %d (%s) served %d product pages whole more than once: %s", i, s.Kind, len(twice), sample(twice))
			}
		}

		promisedHere, parents := promised(s.Site, hits)
		var lostHere []string
		for _, p := range promisedHere {
			h, asked := last[p]
			switch {
			case !asked && cr.pastDepth(s.url+p):
				// Past MaxDepth: the scraper's choice, not work left.
			case !asked:
				unfinished = append(unfinished, s.host+p+" never requested")
				lostHere = append(lostHere, p)
			case !ok(h) && p == "/" && cr.c.Wiring.Revisits > 0 && okCount[p] > 0:
				// A deliberate revisit of the start page failed after the
				// page was served whole: its links were followed, so
				// nothing is lost (the revisit's own end is judged by the
				// revisit check: it must reach OnResponse or OnError), but
				// the revisit the scraper asked for is work left: an
				// ending of tripped is true.
				unfinished = append(unfinished, fmt.Sprintf("%s%s a deliberate revisit last answered %d %s", s.host, p, h.Status, h.Mode))
			case ok(h):
				if strings.HasPrefix(p, "/products/") && written[s.url+p] == 0 {
					unfinished = append(unfinished, s.host+p+" served whole, not written")
					lostHere = append(lostHere, p)
				}
			case gone(h):
			default:
				unfinished = append(unfinished, fmt.Sprintf("%s%s last answered %d %s", s.host, p, h.Status, h.Mode))
				lostHere = append(lostHere, p)
			}
		}
		// A deliberate revisit of the start page that Colly's request cap
		// (MaxRequests) refused in the last run: asked for, never made,
		// though the page was served before. Work left, which the ending
		// names (the scraper hands it to NotVisited).
		if cr.c.Wiring.Revisits > 0 && len(cr.runs) > 0 && cr.runs[len(cr.runs)-1].refusedByColly[s.url+"/"] == colly.ErrMaxRequests.Error() {
			unfinished = append(unfinished, s.host+"/ a deliberate revisit refused by MaxRequests")
		}
		// One the crawl's own end (a cancelled context, a deadline) stopped
		// before it was made is work left too.
		if cr.c.Wiring.Revisits > 0 && len(cr.runs) > 0 && slices.Contains(cr.runs[len(cr.runs)-1].revisitsCut, s.url+"/") {
			unfinished = append(unfinished, s.host+"/ a deliberate revisit stopped by the crawl's end")
		}
		// Requests into pages nobody promised (a 404 link) that failed.
		for p, h := range last {
			if !slices.Contains(promisedHere, p) && !ok(h) && !gone(h) {
				unfinished = append(unfinished, fmt.Sprintf("%s%s last answered %d %s", s.host, p, h.Status, h.Mode))
			}
		}
		// Links to missing products on a listing page served whole and
		// never requested: the crawler cannot know they are missing, so
		// they are work left (not promised: they hold no product).
		if s.Extra404 > 0 {
			for p := range last {
				if !isListing(p) || okCount[p] == 0 {
					continue
				}
				for j := 1; j <= s.Extra404; j++ {
					gp := testserver.ProductPath(s.Products + j + 1000*pageOf(p))
					if _, asked := last[gp]; !asked && !cr.pastDepth(s.url+gp) {
						unfinished = append(unfinished, s.host+gp+" (a link to a missing product) never requested")
					}
				}
			}
		}

		// 3. Nothing lost silently.
		if !hung {
			cr.checkLost(add, i, s, lostHere, parents, final)
		}

		// 5. Requests into a failing store ≤ need + P − 1.
		if s.Kind.failing() || s.Kind == kSlope {
			need := w.Profile.Settings().FailuresToTrip()
			// P: what the wiring allows at once, capped by the breaker's
			// room (need) where nothing of the user's limits the domain.
			p := w.Parallelism()
			how := "P=" + strconv.Itoa(p)
			if c := w.Concurrency(); !w.Process && (c == 0 || c > p) {
				how = "P=room(" + strconv.Itoa(p) + ")"
			}
			failing := 0
			var first, last time.Time
			for _, h := range hits {
				if h.Failing() {
					failing++
					if first.IsZero() {
						first = h.Time
					}
					last = h.Time
				}
			}
			workers := max(w.Workers, 1) // in Redis mode: (need + P - 1) × workers
			// A run that outlasts a cooldown (a Redis worker waiting for
			// its parked jobs) sends the half-open probes the profile
			// allows after each: not the trip bound's. A cooldown only
			// grows with repeated trips, so this counts the most there
			// can have been.
			probes := 0
			if cd := w.Profile.Cooldown; cd > 0 {
				probes = int(last.Sub(first)/cd) * w.Profile.HalfOpenProbes
			}
			// Through a pool, a failure through a proxy failing most of
			// what it carries goes again through another proxy, to tell
			// the proxy's failure from the site's: at most once through
			// each other proxy.
			told := max(len(w.Proxies)-1, 0)
			if bound := (need + p - 1 + probes + told) * workers; failing > bound {
				add(5, "store %d (%s) received %d requests after it began failing; bound (need+P-1+probes+told)×workers = (%d+%d-1+%d+%d)×%d = %d (%s, %s)",
					i, s.Site, failing, need, p, probes, told, workers, bound, how, w.Profile.Name)
			}
			cr.pBy = append(cr.pBy, how)
		}

		// 5, for a store that answers 403 to everything: held after
		// breaker.Config.BlockedAfter of them in a row (default 10), it
		// receives at most that many + P − 1 blocked requests a run, a
		// retry loop or not (a 403 never counts against the circuit).
		if s.Kind == kBlocked {
			const blockedAfter = 10
			p := w.Parallelism()
			if w.Clone {
				// A clone's requests reach the breaker at the transport,
				// bounded by the breaker's room, not the user's limits.
				p = max(p, w.breakerInFlight())
			}
			blocked := 0
			for _, h := range hits {
				if h.Mode == testserver.Blocked {
					blocked++
				}
			}
			runs, workers := max(len(cr.runs), 1), max(w.Workers, 1)
			// Through a pool, the first 403s go again through other proxies
			// to tell whose they are; they count in the site's run once it
			// is found to refuse the client, so the bound is the same.
			if bound := (blockedAfter + p - 1) * workers * runs; blocked > bound {
				add(5, "blocked store %d (%s) received %d requests it answered 403; bound (BlockedAfter+P-1)×workers×runs = (%d+%d-1)×%d×%d = %d",
					i, s.Site, blocked, blockedAfter, p, workers, runs, bound)
			}
		}

		// 6. Nothing before a Retry-After has passed.
		cr.checkRetryAfter(add, i, s, hits)

		// 7. A healthy store is never refused nor tripped, a bad proxy
		// notwithstanding; unless more proxies fail than the pool may
		// eject: the client side, which keeps the URLs for a later run.
		if s.Kind == kHealthy {
			healthyStore = true
			if !hung && !cutShort && !w.proxiesClientSide() {
				cat := testserver.Catalog{Products: s.Products, PerPage: s.PerPage}
				var missing []string
				for p := 1; p <= cat.ListingPages(); p++ {
					path := testserver.ListingPath(p)
					if p == 1 {
						path = "/"
					}
					if h, asked := last[path]; !asked || !ok(h) {
						missing = append(missing, path)
					}
				}
				for n := 1; n <= cat.Len(); n++ {
					if u := s.url + testserver.ProductPath(n); written[u] == 0 {
						missing = append(missing, testserver.ProductPath(n))
					}
				}
				if len(missing) > 0 && !cr.capped(s, colly.ErrMaxDepth, colly.ErrMaxRequests) {
					add(7, "healthy store %d (%s) was not crawled whole: %d of %d pages missing (%s)",
						i, s.Site, len(missing), cat.Len()+cat.ListingPages(), sample(missing))
				}
				// A store MaxRequests left unfinished is rightly named by
				// the ending.
				if slices.Contains(final.outcome.Domains, s.host) && !cr.capped(s, colly.ErrMaxRequests) {
					add(7, "healthy store %d (%s) is named tripped by the ending: %s", i, s.host, final.outcome.Reason)
				}
			}
		}
	}

	// 3, for deliberate revisits (AllowURLRevisit): each one Colly
	// accepted reaches a response callback or OnError, never dropped.
	for i, r := range cr.runs {
		if len(r.revisitsLost) > 0 && !r.hung {
			add(3, "run %d: %d of %d deliberate revisits of a start page reached neither OnResponse nor OnError: %s",
				i+1, len(r.revisitsLost), r.revisitsAsked, sample(r.revisitsLost))
		}
	}

	// 4, for a full disk: the run it stopped says error, a person frees
	// space; it is not killed by the kernel's SIGXFSZ nor called tripped.
	if f.Kind == fDiskFull && len(cr.runs) > 0 {
		r := cr.runs[0]
		filled := strings.Contains(r.outcome.Reason, "file too large") || strings.Contains(r.report, "file too large")
		switch {
		case r.hung:
		case r.exit < 0:
			add(4, "a full disk killed the run (exit %d), want exit 1 (error) and a report", r.exit)
		case filled && r.exit != 1:
			add(4, "a full disk ended the run with exit %d (%s), want 1 (error)", r.exit, r.outcome.Reason)
		}
	}

	// 4. The ending tells the truth.
	if !hung && !(cr.corrupted && final.refused) && final.exit >= 0 {
		switch final.exit {
		case 0:
			if len(unfinished) > 0 {
				add(4, "ended complete (exit 0) with %d URLs unfinished or failed: %s", len(unfinished), sample(unfinished))
			}
		case 3:
			if len(cr.out) > 0 {
				add(4, "ended empty (exit 3) with %d products written", len(cr.out))
			}
		case 2:
			if len(unfinished) == 0 {
				add(4, "ended tripped (exit 2) with nothing left to do: %s", final.outcome.Reason)
			}
		case 1:
			for _, fd := range final.outcome.Findings {
				if fd.Kind == "client_side_suspect" && w.proxiesClientSide() && strings.HasPrefix(fd.Reason, "proxy:") {
					continue // the pool's own finding, and true
				}
				if fd.Kind == "client_side_suspect" && healthyStore && cr.healthyServed() {
					add(4, "ended error (client_side_suspect) while a healthy store was answering: %s", fd.Reason)
					break
				}
			}
		}
	}

	// 9. The user's own transport carried every request.
	if w.Transport && !w.Process {
		carried := int64(0)
		for _, r := range cr.runs {
			carried += max(r.carried, 0)
		}
		if carried < int64(total) {
			add(9, "the user's transport carried %d of the %d requests the stores received: it was replaced (received more often than carried: %s)",
				carried, total, cr.pastTransport())
		}
	}
	return vs
}

// pastTransport names the requests a store received more often than the
// user's transport carried them, at most five.
func (cr *caseRun) pastTransport() string {
	carried := map[string]int{}
	for _, r := range cr.runs {
		for k, n := range r.carriedPaths {
			carried[k] += n
		}
	}
	received := map[string]int{}
	for i, s := range cr.sites {
		for _, h := range cr.hits[i] {
			received[s.host+h.Path]++
		}
	}
	var out []string
	for k, n := range received {
		if n > carried[k] {
			out = append(out, fmt.Sprintf("%s %d×/%d×", k, n, carried[k]))
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], "…")
	}
	return strings.Join(out, ", ")
}

// healthyServed reports whether some healthy store answered a page whole.
func (cr *caseRun) healthyServed() bool {
	for i, s := range cr.sites {
		if s.Kind == kHealthy && slices.ContainsFunc(cr.hits[i], ok) {
			return true
		}
	}
	return false
}

// checkLost is invariant 3 for store i: every promised product not written
// is held unfinished or dead, with a cause, by the checkpoint; without one,
// the ending must not be complete and must name the store.
func (cr *caseRun) checkLost(add func(int, string, ...any), i int, s *site, lost []string, parents map[string][]string, final runOut) {
	var silent []string
	for _, p := range lost {
		u := s.url + p
		if cr.hasCP && !cr.corrupted {
			st, known := cr.cp[u]
			if ru := cr.redirected(s, p); !known && ru != "" {
				// Visited through the redirecting host: the checkpoint may
				// hold it by the URL the scraper visited.
				st, known = cr.cp[ru]
				u = ru
			}
			// A page that linked to it and is not done will be fetched
			// again on resume, and the link found again; so will one the
			// checkpoint never held whose own parent is not done (a kill
			// lost the links of a page whose record was not yet durable).
			refetched := cr.rediscovered(s, p, parents, map[string]bool{})
			switch {
			case !known && refetched:
			case !known:
				silent = append(silent, p+" (not in the checkpoint)")
			case st == storage.Done:
				silent = append(silent, p+" (done in the checkpoint, not in the output)")
			case (st == storage.Failed || st == storage.Dead) && cr.cpErr[u] == "":
				silent = append(silent, p+" ("+st.String()+" with no cause)")
			}
			continue
		}
		// Without a checkpoint the ending is the report: an error or
		// an empty run alerts a person; a tripped one must name the store.
		// In Redis mode what is left stays queued in Redis, which the
		// ending counts without naming stores: there only complete lies.
		// A product visited through the redirecting host may be named
		// by that host: the URL the scraper visited.
		if ru := cr.redirected(s, p); ru != "" && final.exit == 2 && named(final.outcome, strings.TrimPrefix(cr.redir.url, "http://")) {
			continue
		}
		if final.exit == 0 || (final.exit == 2 && cr.c.Wiring.Workers == 0 && !named(final.outcome, s.host)) {
			silent = append(silent, p)
		}
	}
	if len(silent) > 0 {
		where := "the checkpoint"
		if !cr.hasCP {
			where = fmt.Sprintf("the ending (exit %d: %s)", final.exit, final.outcome.Reason)
		}
		add(3, "store %d (%s): %d promised URLs neither written nor accounted for by %s: %s",
			i, s.Site, len(silent), where, sample(silent))
	}
}

// named reports whether the ending names host.
func named(o outcome.Outcome, host string) bool {
	if slices.Contains(o.Domains, host) {
		return true
	}
	for _, f := range o.Findings {
		if slices.Contains(f.Domains, host) || strings.Contains(f.Reason, host) {
			return true
		}
	}
	return false
}

// checkRetryAfter is invariant 6 for store i: after an answer carrying
// Retry-After, no request arrives until it has passed.
func (cr *caseRun) checkRetryAfter(add func(int, string, ...any), i int, s *site, hits []testserver.Hit) {
	if s.RA == raNone {
		return
	}
	type pause struct {
		seq        int
		from, till time.Time
	}
	var pauses []pause
	switch s.Kind {
	case kThrottle, kThrottleBurst:
		ra := time.Duration(math.Ceil(s.RetryAfter.Seconds())) * time.Second
		for _, h := range hits {
			if h.Mode == testserver.Throttle {
				at := h.Time.Add(h.Latency)
				pauses = append(pauses, pause{h.Seq, at, at.Add(ra)})
			}
		}
	case kRateLimit:
		if s.Status != 429 {
			return
		}
		// The store's token bucket, replayed from its log.
		tokens, refilled := float64(s.Burst), time.Time{}
		for _, h := range hits {
			if refilled.IsZero() {
				refilled = h.Time
			}
			if el := h.Time.Sub(refilled); el > 0 {
				tokens = math.Min(float64(s.Burst), tokens+el.Seconds()*s.Rate)
				refilled = h.Time
			}
			if tokens >= 1 {
				tokens--
				continue
			}
			wait := time.Duration((1 - tokens) / s.Rate * float64(time.Second))
			secs := max(1, int((wait+time.Second-1)/time.Second))
			at := h.Time.Add(h.Latency)
			pauses = append(pauses, pause{h.Seq, at, at.Add(time.Duration(secs) * time.Second)})
		}
	default:
		return
	}
	// A Retry-After answered after a kill or crash was sent to the process
	// could not be read by it, nor saved for the next one.
	var killedAt time.Time
	if f := cr.c.Fault; (f.Kind == fKill || f.Kind == fQuit) && len(cr.runs) > 0 {
		killedAt = cr.runs[0].start.Add(f.At)
	}
	// A worker started once Redis came back empty (Fault.Late) cannot know
	// a pause answered to another worker before it started: one answered
	// before the kill was shared through the Redis that was lost, and one
	// answered later could not be shared at all (Redis was down, or the
	// emptied Redis refuses the writes of a run it does not know).
	var lateStart time.Time
	if f := cr.c.Fault; f.Late && !cr.second && len(cr.runs) >= 2 {
		lateStart = cr.runs[len(cr.runs)-1].start
	}
	// A pause answered to a run a full disk stopped binds the resume only
	// if that run could save it: the save of a 429 is flushed at once, and
	// that flush may be the very commit the full disk refused.
	var resumedAt time.Time
	if f := cr.c.Fault; f.Kind == fDiskFull && len(cr.runs) >= 2 {
		resumedAt = cr.runs[1].start
	}
	for _, p := range pauses {
		if !killedAt.IsZero() && p.from.After(killedAt) && p.from.Before(cr.runs[0].end) {
			continue
		}
		lost := !resumedAt.IsZero() && p.from.Before(cr.runs[0].end) && cr.savedHalt[s.host].Before(p.till.Add(-retryAfterSlack))
		for _, h := range hits {
			if !lateStart.IsZero() && p.from.Before(lateStart) && h.Time.After(lateStart) {
				continue
			}
			if lost && !h.Time.Before(resumedAt) {
				continue
			}
			if h.Time.After(p.from.Add(retryAfterSlack)) && h.Time.Before(p.till.Add(-retryAfterSlack)) {
				add(6, "store %d (%s): request %d (%s) arrived %v after request %d's answer asked for a pause of %v",
					i, s.Site, h.Seq, h.Path, h.Time.Sub(p.from).Round(time.Millisecond), p.seq, p.till.Sub(p.from))
				return
			}
		}
	}
}

// note is what -v prints after the case line: each run's ending.
func (cr *caseRun) note() string {
	var parts []string
	for i, r := range cr.runs {
		s := fmt.Sprintf("run%d=exit %d", i+1, r.exit)
		if r.hung {
			s = fmt.Sprintf("run%d=hung", i+1)
		} else if r.refused {
			s = fmt.Sprintf("run%d=refused", i+1)
		}
		if r.prog != nil && r.prog.sig != "" {
			s += "(" + r.prog.sig + ")"
		}
		parts = append(parts, s)
	}
	total := 0
	for _, h := range cr.hits {
		total += len(h)
	}
	parts = append(parts, fmt.Sprintf("requests=%d written=%d", total, len(cr.out)))
	handBacks, dormant := 0, 0
	for _, r := range cr.runs {
		handBacks += r.handBacks
		dormant += r.dormant
	}
	if handBacks > 0 {
		parts = append(parts, fmt.Sprintf("handed_back=%d", handBacks))
	}
	if dormant > 0 {
		parts = append(parts, fmt.Sprintf("dormant=%d", dormant))
	}
	if len(cr.pBy) > 0 {
		parts = append(parts, strings.Join(cr.pBy, ","))
	}
	return strings.Join(parts, " ")
}

func sample(s []string) string {
	if len(s) > 4 {
		return strings.Join(s[:4], ", ") + fmt.Sprintf(", … (%d more)", len(s)-4)
	}
	return strings.Join(s, ", ")
}

// rediscovered reports whether a resume will find a link to p again: some
// page linking to it is held unfinished by the checkpoint, or is itself
// unknown to it and rediscovered the same way.
func (cr *caseRun) rediscovered(s *site, p string, parents map[string][]string, seen map[string]bool) bool {
	if seen[p] {
		return false
	}
	seen[p] = true
	return slices.ContainsFunc(parents[p], func(parent string) bool {
		pst, ok := cr.cp[s.url+parent]
		if ok {
			return pst != storage.Done
		}
		return cr.rediscovered(s, parent, parents, seen)
	})
}
