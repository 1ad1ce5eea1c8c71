package breaker_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker/breakertest"
)

func TestClosedState(t *testing.T) { breakertest.RunClosed(t, newMemCircuit) }
