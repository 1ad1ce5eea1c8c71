package metrics

import "github.com/breakwater-crawl/breakwater/observe"

// OutcomeHook exposes the OnAttempt hook to the benchmarks, which call it
// the way the Colly wiring does.
func OutcomeHook(m *Metrics) func(observe.Attempt) { return m.outcome }
