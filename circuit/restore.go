package circuit

import "github.com/breakwater-crawl/breakwater/clock"

// RestoreWindow puts outcomes results, the latest failures of them
// failures, back into c, a circuit deciding with s, as a checkpoint saved
// them: a crawl restarted into a site still failing trips as fast as it
// would have without the restart. A negative failures is the probation of
// a circuit saved open whose cooldown ended while the crawl was stopped: a
// full window one failure short of a trip, so its first failure re-opens
// it. The window never trips the circuit: failures beyond one short of a
// trip, by the failure rate or ConsecutiveFailures, are dropped. A circuit
// that is not closed gets no window. It goes through Allow and Record
// alone, so it restores any Circuit.
func RestoreWindow(c Circuit, clk clock.Clock, s Settings, outcomes, failures int) error {
	if snap, err := c.Snapshot(clk); err != nil || snap.State != Closed {
		return err
	}
	most := s.FailuresToTrip() - 1
	if s.ConsecutiveFailures > 0 {
		most = min(most, s.ConsecutiveFailures-1)
	}
	if failures < 0 {
		outcomes, failures = s.WindowSize, most
	}
	failures = max(min(failures, most), 0)
	outcomes = max(min(outcomes, s.WindowSize), failures)
	for i := range outcomes {
		r := Result{Class: Success}
		if i >= outcomes-failures {
			r.Class = Degraded
		}
		tk, _, err := c.Allow(clk)
		if err != nil {
			return err
		}
		if _, err := c.Record(clk, tk, r); err != nil {
			return err
		}
	}
	return nil
}
