package metrics

import "github.com/breakwater-crawl/breakwater/extensions/breaker"

// OutcomeHook exposes the OnAttempt hook to the benchmarks, which call it
// the way the Colly wiring does.
func OutcomeHook(m *Metrics) func(breaker.Attempt) { return m.outcome }
