package breaker

import "github.com/breakwater-crawl/breakwater/internal/pace"

// Pacing is the user's ceiling for each domain's pace (Config.Pacing): the
// most requests in flight to one domain (Parallelism) and the least time
// between two requests to it (MinGap). A 429, or a 503 with Retry-After,
// halts the domain until then and multiplies its pace down (Backoff, once
// per throttle episode, the gap never past MaxGap); clean successes raise
// it step by step (Recover, Step), never past these settings; a domain
// answering nothing but throttles for ThrottleHorizon is held open. Zero
// fields take the defaults (Backoff 2, Recover 10, Step a tenth of the
// throttled gap, DefaultMaxGap, DefaultThrottleHorizon); docs/pacing.md
// tells each field.
type Pacing = pace.Config

// Defaults for the Pacing fields whose zero value stands for a default.
const (
	DefaultMaxGap          = pace.DefaultMaxGap
	DefaultThrottleHorizon = pace.DefaultThrottleHorizon
)

// PaceStats is a domain's pace at one moment: its in-flight cap (0: none
// of Breakwater's), its gap, the requests in flight, the Retry-After
// pauses taken, the time spent paused and the end of the pause in force.
type PaceStats = pace.Stats
