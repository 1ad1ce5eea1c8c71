package redis

import "time"

// backoffWindow is the upper end of the retry delay after the n-th failed
// attempt (n ≥ 1): min(cap, base·2^(n-1)).
func backoffWindow(base, cap time.Duration, n int) time.Duration {
	if n < 1 {
		n = 1
	}
	w := base
	for i := 1; i < n; i++ {
		if w >= cap/2 {
			return cap
		}
		w *= 2
	}
	return min(w, cap)
}

// backoffDelay is the delay after the n-th failed attempt with full
// jitter, u in [0, 1), so failures that happened together do not retry
// together.
func backoffDelay(base, cap time.Duration, n int, u float64) time.Duration {
	return time.Duration(u * float64(backoffWindow(base, cap, n)))
}
