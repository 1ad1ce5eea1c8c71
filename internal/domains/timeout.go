package domains

import "time"

// TimeoutFor is the request timeout the breaker's transport applies to d:
// its adaptive timeout, else the fleet's prior (deadline.Prior) if its
// profile sets one, 0 for none.
func (b *Set) TimeoutFor(d *Domain) time.Duration {
	if t := time.Duration(d.Timeout.Load()); t > 0 {
		return t
	}
	if d.Profile.TimeoutMultiple <= 0 {
		return 0
	}
	return b.prior.For(d.Profile.TimeoutFloor)
}
