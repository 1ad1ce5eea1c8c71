package breaker

import "github.com/breakwater-crawl/breakwater/circuit"

// ErrOpen is the sentinel every refusal matches: errors.Is(err, ErrOpen)
// is true for a *CircuitOpenError.
var ErrOpen = circuit.ErrOpen
