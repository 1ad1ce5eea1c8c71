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
			r.Counts[c] = rnd.Uint32() >> rnd.IntN(32)
		}
		r.Refused, r.Trips, r.Streak, r.HealthyRun = rnd.Uint32(), rnd.Uint32()>>20, uint32(rnd.IntN(5)), uint32(rnd.IntN(50))
		r.Fails, r.NetFails, r.Pauses, r.Successes, r.Tracked = rnd.Uint32(), rnd.Uint32(), rnd.Uint32()>>16, rnd.Uint32(), uint32(rnd.IntN(101))
		r.SlowN, r.SlowNext = uint16(rnd.IntN(51)), uint16(rnd.IntN(50))
		r.Rate = rnd.Float32()
		r.BaseFlight = uint32(rnd.IntN(200))
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
