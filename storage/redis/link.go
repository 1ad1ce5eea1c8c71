package redis

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// link is what a store knows about its Redis: answering, or unreachable
// since a time. Then one call at a time tries again once the backoff has
// passed; the others act on the store's policy at once.
type link struct {
	component string // for logs: "breaker", "colly storage"
	crawl     string
	policy    string // for logs: what the component does meanwhile
	base, cap time.Duration
	log       zerolog.Logger

	mu       sync.Mutex
	down     bool
	since    time.Time // when it went down
	upAt     time.Time // when it last came back
	failures int       // consecutive failed tries
	nextTry  time.Time
	trying   bool  // a call is trying Redis again right now
	cause    error // the last failure, wrapping ErrUnavailable
}

func newLink(component, crawl, policy string, s settings) *link {
	return &link{component: component, crawl: crawl, policy: policy, base: s.ReconnectBase, cap: s.ReconnectCap, log: s.Logger}
}

// admit reports whether a call may go to Redis now (trial: the one retry
// due, which must report ok or failed); else cause is the last failure.
func (l *link) admit(now time.Time) (yes, trial bool, cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down {
		return true, false, nil
	}
	if l.trying || now.Before(l.nextTry) {
		return false, false, l.cause
	}
	l.trying = true
	return true, true, nil
}

// ok records that Redis answered a call started at started.
func (l *link) ok(started, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down || started.Before(l.since) {
		return
	}
	l.log.Info().Str("event", "redis_recovered").Str("component", l.component).Str("crawl", l.crawl).
		Dur("down_for", now.Sub(l.since)).Int("tries", l.failures).
		Msgf("breakwater/redis: %s: Redis answers again; shared state in use", l.component)
	l.down, l.trying, l.failures, l.cause, l.upAt = false, false, 0, nil, now
}

// failed records that a call could not reach Redis. Only the first failure
// and the trial's count; one that left before Redis came back is old news.
func (l *link) failed(started, now time.Time, err error, trial bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !l.down && started.Before(l.upAt):
	case !l.down:
		l.down, l.since, l.failures, l.cause = true, now, 1, err
		l.nextTry = now.Add(halfJitter(l.base, l.cap, 1, rand.Float64()))
		l.log.Warn().Str("event", "redis_unavailable").Str("component", l.component).Str("crawl", l.crawl).
			Str("policy", l.policy).Err(err).Time("next_try", l.nextTry).
			Msgf("breakwater/redis: %s: Redis unreachable; %s until it answers", l.component, l.policy)
	case trial:
		l.trying = false
		l.failures++
		l.cause = err
		l.nextTry = now.Add(halfJitter(l.base, l.cap, l.failures, rand.Float64()))
	}
}

// state returns since when Redis is unreachable, the next try and cause.
func (l *link) state() (since, nextTry time.Time, cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.since, l.nextTry, l.cause
}

// backoffWindow is the upper end of the retry delay after the n-th failed
// attempt (n ≥ 1): min(cap, base·2^(n-1)).
func backoffWindow(base, cap time.Duration, n int) time.Duration {
	w := base
	for i := 1; i < n; i++ {
		if w >= cap/2 {
			return cap
		}
		w *= 2
	}
	return min(w, cap)
}

// backoffDelay is the delay after the n-th failure with full jitter (u
// in [0, 1)), so failures that happened together do not retry together.
func backoffDelay(base, cap time.Duration, n int, u float64) time.Duration {
	return time.Duration(u * float64(backoffWindow(base, cap, n)))
}

// halfJitter is a wait in the upper half of the n-th backoff window.
func halfJitter(base, cap time.Duration, n int, u float64) time.Duration {
	w := backoffWindow(base, cap, n)
	return w/2 + time.Duration(u*float64(w/2))
}
