package breaker_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker/breakertest"
)

func TestHalfOpenState(t *testing.T) { breakertest.RunHalfOpen(t, newMemCircuit) }
