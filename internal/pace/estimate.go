package pace

import (
	"math"
	"time"
)

// The rate estimator: what a throttling site grants, learnt from when it
// said no and how many requests it took in between.
//
// A site that throttles (a token bucket, nginx's limit_req) answers 429 at
// the moment its allowance is spent. Between two such moments it accepted
// what it refilled meanwhile: n answers over Δ give a rate the site
// granted at least (n/Δ; less when its bucket was full and overflowed
// during our pause). Its burst is learnt from the first run, the requests
// a fresh domain was granted before its first 429: with the bucket full
// again after a pause, the answers a run took past that first run, over the
// time past it, are the rate itself. The larger of the two is the estimate;
// each is at most the rate, save for a bucket that was not full when the
// crawl began, where the estimate errs high and the next 429 takes it down.
//
// Between the first 429 and the second the pace ramps: from the rate the
// first run and its pause averaged, a few per cent faster with each clean
// success, so the run up to the second 429 lasts long enough to measure.
// From the second 429 on the pace holds a margin under the estimate, probes
// upward slowly (a per cent after 20 × Recover clean successes, then
// doubling), and each further 429 takes it down by at least a tenth,
// never by more than Backoff.
//
// A window the crawler did not keep busy (an answer-free stretch in it
// far longer than the pace's gap: the crawler was at other sites, or its
// requests waited for a slot of the user's shared LimitRule) measures the
// crawler, not the site: the bucket refilled in the stretch, and a burst
// spent it. Its 429 is taken as a first run's: the answers since the
// stretch size the burst (when smaller than the first run's) and, over
// the time to the pause's end, start a new ramp. So are the answers since
// a pause while no burst is known (the first 429 came before any answer
// was told): a bucket of unknown size could have filled through the pause,
// which would make the window's rate the pause's.
const (
	rateMargin  = 1.05 // the gap is this much over 1/rate: the pace holds just under what the site grants
	rampStep    = 1.05 // while ramping, each clean success takes the gap down by this factor
	probeStep   = 0.01 // the first upward probe once the estimate held: +1 %, then doubling
	probeEvery  = 20   // clean successes per probe, in units of Config.Recover
	throttleCut = 1.1  // a 429 while holding takes the estimate down by at least this factor
	minAnswers  = 3    // answers a window needs before its rate counts
	maxTimes    = 512  // answers a window keeps
	idleGaps    = 4    // an answer-free stretch over this many gaps (and idleFloor) leaves the site idle
	idleFloor   = 250 * time.Millisecond
)

// estimator is one domain's learnt rate. Pace.mu guards it.
type estimator struct {
	first    time.Time     // first accepted answer; zero before
	firstRun int           // answers granted before the first 429
	firstDur time.Duration // from the first answer to the first 429
	mark     time.Time     // the last 429 that began an episode: the site's allowance was spent then
	haltEnd  time.Time     // the end of the pause after mark
	n        int           // answers accepted since the start, before the first 429
	times    []time.Time   // when the answers since mark came, oldest first; at most maxTimes
	busyFrom int           // 1 + the index in times of the first answer after the window's last idle stretch; 0: none
	rate     float64       // the granted rate, requests per second; 0 = not learnt
	ramping  bool          // after a 429 that ended a first run (the first 429, or one after an idle stretch), until the next
	clean    int           // clean successes since the last probe or 429, while holding
	probe    float64       // the next probe's step
	ceiling  float64       // the rate learnt at the last 429
}

// accepted counts an answer that was not a throttle, at a pace of gap.
func (e *estimator) accepted(now time.Time, gap time.Duration) {
	if e.first.IsZero() {
		e.first = now
	}
	if !e.mark.IsZero() {
		if len(e.times) == maxTimes {
			// Keep the newest: the oldest ones' stretch folds into the mark.
			e.mark = e.times[0]
			e.times = append(e.times[:0], e.times[1:]...)
			e.busyFrom = max(e.busyFrom-1, 0)
		}
		prev := e.haltEnd
		if n := len(e.times); n > 0 && e.times[n-1].After(prev) {
			prev = e.times[n-1]
		}
		if now.Sub(prev) > idleGaps*gap+idleFloor {
			e.busyFrom = len(e.times) + 1
		}
		e.times = append(e.times, now)
		return
	}
	e.n++
}

// throttled takes in a 429 at now that began an episode and pauses the
// domain until haltEnd. It returns the new rate (0: not learnt) and, for
// the first 429, the rate to ramp from (0: none).
func (e *estimator) throttled(now, haltEnd time.Time, backoff float64) (rate, rampFrom float64) {
	defer func() {
		e.mark, e.haltEnd, e.n, e.times, e.busyFrom, e.clean, e.probe = now, haltEnd, 0, e.times[:0], 0, 0, probeStep
	}()
	if e.mark.IsZero() {
		if e.first.IsZero() || e.n < 1 {
			return 0, 0
		}
		e.firstRun, e.firstDur = e.n, now.Sub(e.first)
		e.ramping = true
		return 0, float64(e.n) / haltEnd.Sub(e.first).Seconds()
	}
	if e.rate <= 0 && (e.busyFrom > 0 || e.firstRun == 0 && len(e.times) >= minAnswers) {
		// Nothing learnt, and the crawler left the site idle since the
		// last 429, or no first run told the burst (the first 429 came
		// before any answer was told: a synchronous crawl tells a
		// listing's last): the answers since the stretch, or the pause,
		// are a first run. They spent a bucket the stretch or the pause
		// refilled: at most its size, the burst, when no first run told
		// a smaller one.
		run := e.times[max(e.busyFrom-1, 0):]
		if e.firstRun == 0 || len(run) < e.firstRun {
			e.firstRun, e.firstDur = len(run), now.Sub(run[0])
		}
		e.ramping = true
		return 0, float64(len(run)) / haltEnd.Sub(run[0]).Seconds()
	}
	est := e.window(now)
	e.ramping = false
	if e.rate > 0 {
		// A 429 while holding: the estimate was high.
		if est <= 0 {
			est = e.rate / backoff
		}
		est = min(max(est, e.rate/backoff), e.rate/throttleCut)
	}
	if est > 0 {
		e.rate, e.ceiling = est, est
	}
	return e.rate, 0
}

// window is the rate the answers since the last 429 say the site grants,
// 0 when too few. A bucket of the first run's size (unbounded, none known),
// half a request full at mark when the site said no, had a request's worth
// for each answer since and less than one now: the first bounds the rate
// from below, the second from above; the window is the middle.
func (e *estimator) window(now time.Time) float64 {
	if len(e.times) < minAnswers || !now.After(e.mark) {
		return 0
	}
	capacity := math.Inf(1)
	if e.firstRun > 0 {
		capacity = float64(e.firstRun)
	}
	hi := float64(len(e.times)+1) / now.Sub(e.mark).Seconds()
	for {
		if _, spent := e.replay(hi, capacity, now); !spent {
			break
		}
		if hi > 1e6 {
			return 0
		}
		hi *= 2
	}
	// Bisect for the least rate that granted every answer and the most
	// that left nothing for the 429: both grow with the rate.
	bisect := func(pass func(r float64) bool) float64 {
		lo, hi := 0.0, hi
		for range 50 {
			if mid := (lo + hi) / 2; pass(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return hi
	}
	least := bisect(func(r float64) bool { granted, _ := e.replay(r, capacity, now); return granted })
	most := bisect(func(r float64) bool { _, spent := e.replay(r, capacity, now); return !spent })
	if least > most {
		return most // the answers' times are the client's, not the site's: they jitter
	}
	return (least + most) / 2
}

// replay runs the answers since mark through a bucket of capacity filling
// at rate, half a request full at mark: whether it held a request for each,
// and whether it held less than one at now.
func (e *estimator) replay(rate, capacity float64, now time.Time) (granted, spent bool) {
	l, at := 0.5, e.mark
	granted = true
	for _, t := range e.times {
		l = min(capacity, l+t.Sub(at).Seconds()*rate)
		if l < 1 {
			granted = false
		}
		l, at = l-1, t
	}
	return granted, min(capacity, l+now.Sub(at).Seconds()*rate) < 1
}

// succeeded counts a clean success while holding and says by what factor
// to raise the rate (1: not now): a per cent every probeEvery × recover,
// doubling once past a tenth over the rate last learnt.
func (e *estimator) succeeded(recover int) float64 {
	if e.rate <= 0 {
		return 1
	}
	e.clean++
	if e.clean < probeEvery*recover {
		return 1
	}
	e.clean = 0
	f := 1 + e.probe
	if e.rate > throttleCut*e.ceiling {
		e.probe *= 2 // past what the site last granted by far: it may grant much more now
	}
	return f
}

// rampFactor is by how much a clean success speeds the ramp up: by
// rampStep, or more when the answers come far apart, so that the ramp
// doubles the rate at least every second (from a rate far under the
// site's, a few per cent per answer would take long).
func (e *estimator) rampFactor() float64 {
	n := len(e.times)
	if n == 0 {
		return rampStep
	}
	prev := e.haltEnd
	if n > 1 && e.times[n-2].After(prev) {
		prev = e.times[n-2]
	}
	dt := e.times[n-1].Sub(prev).Seconds()
	return min(max(rampStep, math.Exp2(dt)), 2)
}

// gapFor is the gap that holds just under rate.
func gapFor(rate float64) time.Duration {
	return time.Duration(rateMargin / rate * float64(time.Second))
}
