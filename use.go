package breakwater

import (
	"errors"
	"fmt"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/gocolly/colly/v2"
)

// Extension is anything that wires itself into a collector by registering
// callbacks. Every Breakwater extension implements it, and its Register
// method value is a colly.CollectorOption.
type Extension interface {
	Register(c *colly.Collector)
}

// Use wires exts into c, in the order they need whatever order they are
// given in: the validators first, then the breaker, which every validator
// judges for and every observe.Observer (the checkpoint, the Redis queue,
// the metrics) follows, then the rest as given, observers last. A nil
// extension is skipped.
//
//	breakwater.Use(c, v, b, cp)
//
// It returns an error, and registers nothing, when more than one breaker
// is given, when an observer is given without a breaker, or when an
// observer refuses the breaker (a checkpoint whose saved circuits cannot
// be restored).
func Use(c *colly.Collector, exts ...Extension) error {
	var (
		b          *breaker.Breaker
		validators []Extension
		observers  []Extension
		rest       []Extension
	)
	for _, e := range exts {
		switch x := e.(type) {
		case nil:
		case *breaker.Breaker:
			if x == nil {
				continue
			}
			if b != nil && b != x {
				return errors.New("breakwater: Use: two breakers; a crawl has one (give it per-domain profiles with breaker.Config.Domains)")
			}
			b = x
		case breaker.Validator:
			validators = append(validators, e)
		case observe.Observer:
			observers = append(observers, e)
		default:
			rest = append(rest, e)
		}
	}
	if len(observers) > 0 && b == nil {
		return fmt.Errorf("breakwater: Use: %T follows a breaker, and none was given; pass the breaker too", observers[0])
	}
	if b != nil {
		if len(validators) > 0 {
			b.SetValidator(validators[0].(breaker.Validator))
		}
		for _, o := range observers {
			if err := o.(observe.Observer).Observe(b); err != nil {
				return fmt.Errorf("breakwater: Use: %T: %w", o, err)
			}
		}
	}
	for _, e := range validators {
		e.Register(c)
	}
	if b != nil {
		b.Register(c)
	}
	for _, e := range rest {
		e.Register(c)
	}
	for _, e := range observers {
		e.Register(c)
	}
	return nil
}
