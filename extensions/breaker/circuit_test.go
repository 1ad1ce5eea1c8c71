package breaker_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

func newMemCircuit(t *testing.T, domain string, p breaker.Profile) breaker.Circuit {
	c, err := breaker.NewCircuit(domain, p)
	if err != nil {
		t.Fatalf("NewCircuit: %v", err)
	}
	return c
}
