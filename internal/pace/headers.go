package pace

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Quota is what a site's rate-limit headers said in one answer: the
// requests it still grants (Remaining) until its window resets (Reset
// from now).
type Quota struct {
	Remaining int
	Reset     time.Duration
}

// epochFloor tells a Reset given as a Unix time (GitHub's, Twitter's
// X-RateLimit-Reset) from one given in seconds from now.
const epochFloor = 1e9

// ParseQuota reads the rate-limit headers of an answer at now: the
// IETF draft's RateLimit-Remaining and RateLimit-Reset, its later single
// RateLimit field (remaining=/r=, reset=/t=), or the X-RateLimit- pair
// (Reset in seconds from now, or a Unix time). ok is false unless both a
// remaining count and a reset time in the future were read.
func ParseQuota(h http.Header, now time.Time) (q Quota, ok bool) {
	if h == nil {
		return Quota{}, false
	}
	// The names as h.Get would canonicalize them (Ratelimit, not RateLimit):
	// given already canonical, a lookup allocates nothing, and this runs
	// for every answer.
	for _, pair := range [...][2]string{
		{"Ratelimit-Remaining", "Ratelimit-Reset"},
		{"X-Ratelimit-Remaining", "X-Ratelimit-Reset"},
	} {
		rem, okR := firstNumber(h.Get(pair[0]))
		reset, okT := firstNumber(h.Get(pair[1]))
		if okR && okT {
			return quota(rem, reset, now)
		}
	}
	if v := h.Get("Ratelimit"); v != "" {
		var rem, reset float64
		var okR, okT bool
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
			k, val, found := strings.Cut(strings.TrimSpace(part), "=")
			if !found {
				continue
			}
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "remaining", "r":
				rem, okR = firstNumber(val)
			case "reset", "t":
				reset, okT = firstNumber(val)
			}
		}
		if okR && okT {
			return quota(rem, reset, now)
		}
	}
	return Quota{}, false
}

func quota(rem, reset float64, now time.Time) (Quota, bool) {
	if rem < 0 || reset <= 0 {
		return Quota{}, false
	}
	d := time.Duration(reset * float64(time.Second))
	if reset >= epochFloor {
		d = time.Unix(int64(reset), 0).Sub(now)
	}
	if d <= 0 {
		return Quota{}, false
	}
	return Quota{Remaining: int(min(rem, 1e9)), Reset: min(d, 365*24*time.Hour)}, true
}

// firstNumber reads the number a header value starts with ("100",
// "100, 100;w=60", "1.5"), and whether there was one.
func firstNumber(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false // no field: ParseFloat would allocate its error to say so
	}
	end := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end >= 0 {
		v = v[:end]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// Advertised takes in a quota a site advertised at now: none left halts
// the domain until the reset, like a Retry-After; some left spreads it
// over the time to the reset (a gap of at least Reset ÷ Remaining) until
// then, within MaxGap.
func (p *Pace) Advertised(now time.Time, q Quota) {
	p.mu.Lock()
	defer p.mu.Unlock()
	reset := now.Add(q.Reset)
	if q.Remaining == 0 {
		p.halt = stampOf(later(reset, p.halt.t()))
		return
	}
	c := p.coldLocked()
	c.quotaGap = min(q.Reset/time.Duration(q.Remaining), p.user.MaxGap)
	c.quotaUntil = reset
}

// gapLocked is the gap a request leaving at now keeps before the next:
// the pace's, or the advertised quota's while it holds.
func (p *Pace) gapLocked(now time.Time) time.Duration {
	if p.cold != nil && now.Before(p.quotaUntil) {
		return max(p.gap, p.quotaGap)
	}
	return p.gap
}
