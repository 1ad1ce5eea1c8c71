package domains

import "time"

// HandBack says when a throttled request's re-send could leave, if that
// is beyond the resend horizon (Config.ResendHorizon): the later of the
// domain's pause and its next start slot by the pace.
func (b *Set) HandBack(d *Domain, now time.Time) (time.Time, bool) {
	if b.resendHorizon <= 0 {
		return time.Time{}, false
	}
	due := d.Pace.Earliest()
	if due.Sub(now) <= b.resendHorizon {
		return time.Time{}, false
	}
	return due, true
}
