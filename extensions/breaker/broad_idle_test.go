package breaker_test

import (
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// idle leaves every domain of br alone past the idle TTL, and sweeps.
func idle(br *breaker.Breaker, clk *clocktest.Fake) {
	br.Compact() // ends the period the domains were used in
	clk.Advance(breaker.DefaultIdleTTL)
	br.Compact()
}
