package pace

import (
	"math"
	"slices"
	"testing"
	"time"
)

// tokenBucket is a rate-limited site: rate tokens a second, at most burst,
// full at the start; a request without a token is answered 429 with a
// Retry-After of the wait for one, in whole seconds, at least 1.
type tokenBucket struct {
	rate, burst, tokens float64
	at                  time.Time
}

func (b *tokenBucket) take(now time.Time) (ok bool, retryAfter time.Duration) {
	if b.at.IsZero() {
		b.tokens, b.at = b.burst, now
	}
	b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.at).Seconds()*b.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
	return false, max(time.Second, (wait+time.Second-1)/time.Second*time.Second)
}

// crawlResult is what simulate measured.
type crawlResult struct {
	wall      time.Duration
	sent, got int // requests sent, 429s among them
}

// simulate crawls pages from site through a pace of cfg with parallelism
// par and a latency each way of lat, on simulated time: a request leaves
// when the pace's limit, gap and halt let it (as Acquire does); a 429's
// page is sent again. No clock, no sleep: exact.
func simulate(t *testing.T, cfg Config, par int, lat time.Duration, site *tokenBucket, pages int) crawlResult {
	t.Helper()
	p := newTestPace(t, cfg, nil)
	type flight struct {
		back time.Time
		ok   bool
		wait time.Duration
		ep   uint64
	}
	var (
		now      = t0
		inflight []flight
		res      crawlResult
		done     int
	)
	for done < pages {
		if res.sent > 20*pages {
			t.Fatalf("%d requests for %d pages: the pace never settled", res.sent, pages)
		}
		// Send while a slot, the gap and the halt allow.
		limit := par
		if p.limit > 0 {
			limit = min(limit, int(p.limit))
		}
		start := p.earliestLocked()
		if len(inflight) < limit && done+len(inflight) < pages && !start.After(now) {
			ok, wait := site.take(now.Add(lat))
			p.next = stampOf(now.Add(p.gap))
			back := now.Add(2 * lat)
			if ok {
				back = back.Add(lat) // a page's body takes longer than a 429's
			}
			inflight = append(inflight, flight{back: back, ok: ok, wait: wait, ep: uint64(p.episode)})
			res.sent++
			continue
		}
		// Otherwise the next event: an answer, or the time the pace lets one go.
		next := time.Time{}
		if len(inflight) > 0 {
			slices.SortFunc(inflight, func(a, b flight) int { return a.back.Compare(b.back) })
			next = inflight[0].back
		}
		if len(inflight) < limit && done+len(inflight) < pages && (next.IsZero() || start.Before(next)) {
			now = start
			continue
		}
		now = next
		f := inflight[0]
		inflight = inflight[1:]
		if f.ok {
			done++
			p.Accepted(now, f.ep)
			p.Succeeded()
			continue
		}
		res.got++
		p.Throttled(now, f.wait, f.ep)
		if testing.Verbose() {
			t.Logf("%v: 429 after %d pages; gap %v, rate %.2f, ramping %v, firstRun %d/%v", now.Sub(t0), done, p.gap, p.estimate().rate, p.estimate().ramping, p.estimate().firstRun, p.estimate().firstDur)
		}
	}
	res.wall = now.Sub(t0)
	return res
}

// The bench's ratelimit scenario (10/s, burst 5, 429 + Retry-After, 300
// pages, 2 in flight) and nginx's limit_req (burst 5 nodelay: 6 at once):
// the pace learns the rate and holds just under it, within the
// bench's goals (≤ 1.15× the ideal wall time, ≤ 1 % 429s). The pace before the
// estimator read 1.25× and 8 429s here, as in the bench. Other sites get
// looser bounds: a first flood of as many 429s as requests in flight, and
// a ramp from a rate far under the site's, are not learnt away.
func TestPaceLearnsATokenBucketsRate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         Config
		par         int
		rate, burst float64
		pages       int
		ratio       float64 // most wall time over the ideal
		got         int     // most 429s
	}{
		{"bench", Config{Parallelism: 2}, 2, 10, 5, 300, 1.15, 3},
		{"drop-in", Config{}, 2, 10, 5, 300, 1.15, 3},
		{"nginx burst=5", Config{Parallelism: 2}, 2, 10, 6, 300, 1.15, 3},
		{"slow site", Config{Parallelism: 4}, 4, 2, 5, 200, 1.15, 4 + 2},
		{"fast site", Config{Parallelism: 8}, 8, 50, 10, 2000, 1.15, 8 + 4},
		{"no burst", Config{Parallelism: 2}, 2, 10, 1, 300, 1.3, 2 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := &tokenBucket{rate: tc.rate, burst: tc.burst}
			r := simulate(t, tc.cfg, tc.par, time.Millisecond, site, tc.pages)
			ideal := time.Duration(float64(tc.pages) / tc.rate * float64(time.Second))
			ratio := float64(r.wall) / float64(ideal)
			t.Logf("wall %v = %.3f× ideal %v; %d of %d requests 429", r.wall, ratio, ideal, r.got, r.sent)
			if ratio > tc.ratio || r.got > tc.got {
				t.Errorf("wall %.3f× ideal, %d 429s: want ≤ %.2f× and ≤ %d", ratio, r.got, tc.ratio, tc.got)
			}
		})
	}
}

// A throttle that is a burst the site gets over: three pages, a 429 with
// Retry-After 1 s, a second 429 as the pause ends (the site still
// throttling, no answer in between), then every answer clean. The second
// 429 learnt no rate, so the pace falls back to the plain slow-down from
// where it was before the ramp, not from the ramp's gap (1/3 s doubled:
// 40 pages at 0.7 s each, the run hung in chaos seed
// 13253204023644923678), and a few clean answers bring it back.
func TestAThrottleBurstLeavesNoSlowPaceBehind(t *testing.T) {
	p := newTestPace(t, Config{Parallelism: 2}, nil)
	now := t0
	for range 3 {
		now = now.Add(15 * time.Millisecond)
		p.Accepted(now, uint64(p.episode))
		p.Succeeded()
	}
	now = now.Add(15 * time.Millisecond)
	p.Throttled(now, time.Second, uint64(p.episode))
	now = now.Add(time.Second + 15*time.Millisecond)
	_, gap, _, _ := p.Throttled(now, time.Second, uint64(p.episode))
	if gap > 2*minThrottleGap*time.Duration(p.user.Backoff) {
		t.Fatalf("gap after a second 429 with nothing learnt: %v; want the plain slow-down (≤ %v)", gap, 2*minThrottleGap*time.Duration(p.user.Backoff))
	}
	for range 40 {
		now = now.Add(15 * time.Millisecond)
		p.Accepted(now, uint64(p.episode))
		_, gap, _ = p.Succeeded()
	}
	if gap > minThrottleGap {
		t.Fatalf("gap after 40 clean answers: %v; want it back near the user's pace (≤ %v)", gap, minThrottleGap)
	}
}

// After a first 429 the pace ramps from the first run's rate; answers
// that are not pages (404s a user's loop asks again and again) are the
// site's grants as much as pages are, and speed the ramp up too: with only
// 404s after the pause the ramp stayed at its first gap (0.2 s for every
// one of 108 requests, the run hung in chaos seed 7112066731020544077).
func TestAnyGrantedAnswerSpeedsTheRampUp(t *testing.T) {
	p := newTestPace(t, Config{Parallelism: 2}, nil)
	now := t0
	for range 11 {
		now = now.Add(6 * time.Millisecond)
		p.Accepted(now, uint64(p.episode))
		p.Succeeded()
	}
	_, first, _, _ := p.Throttled(now, 2*time.Second, uint64(p.episode))
	now = now.Add(2 * time.Second)
	for range 20 {
		now = now.Add(p.gap)
		p.Accepted(now, uint64(p.episode)) // a 404: granted, not a success
	}
	if p.gap > first/2 {
		t.Fatalf("gap after 20 granted 404s: %v, from %v at the 429; want the ramp to have sped up", p.gap, first)
	}
}

// phase is a stretch of a crawl of one site: pages sent one at a time as
// the pace lets them go, after an idle stretch in which the crawler asks
// nothing of the site (it is busy at other sites, or its requests wait for
// a slot of the user's shared LimitRule). A deferred phase's answers reach
// the pace only at its end, as a sync collector's listing pages do: each
// is settled after the pages it links to.
type phase struct {
	pages    int
	idle     time.Duration
	deferred bool
}

// crawlPhases crawls site through p one request at a time, a latency of
// lat each way, phase after phase, on simulated time from t0; a 429's
// page is sent again. It returns the wall time and the 429s.
func crawlPhases(t *testing.T, p *Pace, site *tokenBucket, lat time.Duration, phases []phase) (wall time.Duration, got int) {
	t.Helper()
	now := t0
	for _, ph := range phases {
		now = now.Add(ph.idle)
		var late []uint64 // episodes of the deferred answers
		for done := 0; done < ph.pages; {
			if got > 50 {
				t.Fatalf("%d 429s: the pace never settled", got)
			}
			now = later(now, p.earliestLocked())
			ep := uint64(p.episode)
			p.next = stampOf(now.Add(p.gap))
			ok, wait := site.take(now.Add(lat))
			if !ok {
				now = now.Add(2 * lat)
				got++
				p.Throttled(now, wait, ep)
				if testing.Verbose() {
					t.Logf("%v: 429; gap %v, rate %.2f, ramping %v, firstRun %d", now.Sub(t0), p.gap, p.estimate().rate, p.estimate().ramping, p.estimate().firstRun)
				}
				continue
			}
			now = now.Add(3 * lat)
			done++
			if ph.deferred {
				late = append(late, ep)
				continue
			}
			p.Accepted(now, ep)
			p.Succeeded()
		}
		for _, ep := range late {
			p.Accepted(now, ep)
			p.Succeeded()
		}
	}
	return now.Sub(t0), got
}

// A window between two 429s that the crawler did not keep busy measures
// the crawler, not the site. Chaos seed 18249711101385946355: a sync
// collector crawled a store's 5 listing pages (a 429 on the fourth, none
// of the answers settled yet: each waits for the pages it links to), was
// busy at other stores for 1.5 s, then sent its products 20 ms apart: a
// 429 on the third, the bucket the idle stretch had refilled spent. The
// window's 4 answers over 2.6 s read as a site granting 1.6 a second (a
// bucket of the first run's 3 full after the stretch could not be spent by
// 2 answers, unless it refilled that slowly), and the pace held 0.66 s
// between 100 products of a site that grants 20 a second: 69 s where 6.5
// do. Chaos seed 1273320350468929999 is the same with the stretches in a
// ramp, its requests waiting for a shared LimitRule's slots.
func TestAnIdleWindowIsNotTheSitesRate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rate   float64
		burst  float64
		lat    time.Duration
		phases []phase
	}{
		{"sync, listings settled late, then idle", 20, 2, 9 * time.Millisecond,
			[]phase{{pages: 5, deferred: true}, {pages: 100, idle: 1500 * time.Millisecond}}},
		{"starved by a shared slot while ramping", 17, 4, 8 * time.Millisecond,
			[]phase{{pages: 7}, {pages: 1, idle: 1090 * time.Millisecond}, {pages: 1, idle: 1090 * time.Millisecond},
				{pages: 1, idle: 1090 * time.Millisecond}, {pages: 1, idle: 1090 * time.Millisecond}, {pages: 70, idle: 1090 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPace(t, Config{}, nil)
			site := &tokenBucket{rate: tc.rate, burst: tc.burst}
			wall, got := crawlPhases(t, p, site, tc.lat, tc.phases)
			var pages int
			var idle time.Duration
			for _, ph := range tc.phases {
				pages += ph.pages
				idle += ph.idle
			}
			ideal := idle + time.Duration(float64(pages)/tc.rate*float64(time.Second))
			t.Logf("wall %v = %.2f× ideal %v; %d 429s; gap at the end %v", wall, float64(wall)/float64(ideal), ideal, got, p.gap)
			if wall > 2*ideal {
				t.Errorf("wall %v, over twice the ideal %v: the pace settled far under the site's rate (gap %v at the end, rate %.2f learnt)", wall, ideal, p.gap, p.estimate().rate)
			}
		})
	}
}

// A synchronous collector tells a listing's outcome only after the pages
// its callbacks visited, so the first 429 of a site granting 25 a second
// with a burst of 1 came with no answer counted before it, and its burst
// stayed unknown. After the second pause, three pages 40 ms apart and a
// 429: a bucket of unknown size could have filled through the 1 s pause,
// so the window read 2.7 a second, and the pace held 389 ms between pages
// for the rest of the crawl, probing up a per cent at a time (the times
// below are that crawl's, chaos/SEEDS.md, 4156689346960151665: 23.9 s and
// not done). With nothing learnt and no burst known, the answers since a
// pause are a first run (the pause refilled the bucket): they size it,
// and the pace ramps from them.
func TestAnUnknownBurstIsNotFilledByThePause(t *testing.T) {
	p := newTestPace(t, Config{}, nil)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	p.Throttled(at(7), time.Second, uint64(p.episode)) // sku-1; the listing's answer is told later
	p.Accepted(at(1013), uint64(p.episode))            // sku-1 again, after the pause
	p.Succeeded()
	p.Throttled(at(1034), time.Second, uint64(p.episode)) // sku-2, 20 ms on
	for _, ms := range []int{2040, 2081, 2121} {          // sku-2 again, sku-3, sku-4
		p.Accepted(at(ms), uint64(p.episode))
		p.Succeeded()
	}
	p.Throttled(at(2161), time.Second, uint64(p.episode)) // sku-5
	// Ten pages at the pace's gap, the site granting each.
	now := p.earliestLocked()
	for range 10 {
		now = later(now, p.earliestLocked())
		p.next = stampOf(now.Add(p.gap))
		p.Accepted(now.Add(5*time.Millisecond), uint64(p.episode))
		p.Succeeded()
	}
	if p.gap > 100*time.Millisecond {
		t.Errorf("after 10 pages granted, the gap is %v (rate %.1f/s learnt): the pause was taken for the site's rate", p.gap, p.estimate().rate)
	}
}
