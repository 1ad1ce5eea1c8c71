package breaker_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker/breakertest"
)

func TestOpenState(t *testing.T) { breakertest.RunOpen(t, newMemCircuit) }
