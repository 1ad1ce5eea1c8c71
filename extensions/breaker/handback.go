package breaker

import "time"

// WithResendHorizon bounds how long the breaker holds a throttled URL to
// send it again itself. A 429 (or a 503 with Retry-After) within the
// throttle-retry budget is normally sent again once the domain's pause and
// pace allow, its request kept in flight meanwhile; when that would be
// more than d away, the breaker hands the URL back instead: its Attempt
// has ResendAt set (Retrying and GaveUp unset), it is listed unfinished
// with that time, and an OnOutcome hook that keeps the URL (a shared
// queue's, extensions/checkpoint's) puts it back to be fetched no earlier
// than ResendAt. Without a hook that does, the URL is only listed.
//
// A worker of a shared queue that ends its run once all that is left must
// wait beyond a horizon (storage/redis's WithWaitHorizon) needs this: a
// held request is work under way, and a sustained throttle grows the
// domain's gap up to Pacing.MaxGap, a minute by default. The queue's
// BreakerOptions set it. d ≤ 0 (the default) holds every re-send.
func WithResendHorizon(d time.Duration) Option {
	return func(b *Breaker) error {
		b.resendHorizon = d
		return nil
	}
}

// handBack says when a throttled request's re-send could leave, if that is
// beyond the resend horizon: the later of the domain's pause and its next
// start slot by the pace.
func (b *Breaker) handBack(d *domain, now time.Time) (time.Time, bool) {
	if b.resendHorizon <= 0 {
		return time.Time{}, false
	}
	due := d.pace.earliest()
	if due.Sub(now) <= b.resendHorizon {
		return time.Time{}, false
	}
	return due, true
}
