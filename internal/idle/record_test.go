package idle

import (
	"math/rand/v2"
	"testing"
)

// TestRecordRoundTrips encodes random records and reads
// them back whole.
func TestRecordRoundTrips(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	base := int64(1_800_000_000_000_000_000)
	for range 2000 {
		var r Record
		for c := range numClasses {
			r.Counts[c] = int64(rnd.Uint32() >> rnd.IntN(32))
		}
		r.Refused, r.Trips, r.Streak, r.HealthyRun = int64(rnd.Uint32()), int64(rnd.Uint32()>>20), rnd.Int64N(5), rnd.Int64N(50)
		r.Fails, r.NetFails, r.Pauses, r.Successes, r.Tracked = int64(rnd.Uint32()), int64(rnd.Uint32()), int64(rnd.Uint32()>>16), int64(rnd.Uint32()), rnd.Int64N(101)
		r.SlowN, r.SlowNext = rnd.Int64N(51), rnd.Int64N(50)
		r.Rate = rnd.Float32()
		r.BaseFlight = rnd.Int64N(200)
		r.Median, r.Baseline, r.Timeout, r.PausedFor = rnd.Int64N(1e11), rnd.Int64N(1e10), rnd.Int64N(1e11), rnd.Int64()
		for _, p := range []*int64{&r.LastOK, &r.LastSeen} {
			switch rnd.IntN(3) {
			case 0: // never
			case 1:
				*p = base + rnd.Int64N(1e15)
			default:
				*p = base - rnd.Int64N(1e12) // before the breaker was made (a shared clock)
			}
		}
		if got := Decode(r.Encode(base), base); got != r {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
		}
	}
}
