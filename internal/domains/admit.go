package domains

import (
	"context"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Admitted is a request let through to its domain: its ticket, when it
// left (unix nanos) and the pace's throttle episode it left in.
type Admitted struct {
	Ticket  Ticket
	Left    int64
	Episode uint64
}

// Admit lets a request through to d (pinned): it notes the request
// seen, waits for d's pace with acquire (the gate's wait for a slot, or
// the transport's), asks d's circuit, and waits out a throttle that
// halted d meanwhile. waitErr is acquire's or the halt's (ctx ended);
// allowErr is the circuit's refusal or its store's failure. On either,
// d is let go and nothing is held.
func (b *Set) Admit(ctx context.Context, d *Domain, acquire func() (episode uint64, inFlight int, err error)) (a Admitted, waitErr, allowErr error) {
	a.Left = b.Clock.Now().UnixNano()
	d.lastSeen.Store(a.Left)
	ep, inFlight, err := acquire()
	if err != nil {
		d.Unpin()
		return Admitted{}, err, nil
	}
	t, err := b.AllowPinned(d)
	if err != nil {
		d.Pace.Release()
		return Admitted{}, nil, err
	}
	if err := d.Pace.WaitHalt(ctx); err != nil {
		// A throttle halted the domain while the circuit decided.
		d.Pace.Release()
		b.Record(t, circuit.Result{Class: circuit.Excluded}) // lets d go
		return Admitted{}, err, nil
	}
	a.Ticket, a.Episode = t.WithInFlight(inFlight), ep
	return a, nil, nil
}
