package breaker

import (
	"math/rand/v2"
	"testing"
)

// TestDormantRecordRoundTrips encodes random dormant records and reads
// them back whole.
func TestDormantRecordRoundTrips(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	base := int64(1_800_000_000_000_000_000)
	for range 2000 {
		var r dormant
		for c := range numClasses {
			r.counts[c] = rnd.Uint32() >> rnd.IntN(32)
		}
		r.refused, r.trips, r.streak, r.healthyRun = rnd.Uint32(), rnd.Uint32()>>20, uint32(rnd.IntN(5)), uint32(rnd.IntN(50))
		r.fails, r.netFails, r.pauses, r.successes, r.tracked = rnd.Uint32(), rnd.Uint32(), rnd.Uint32()>>16, rnd.Uint32(), uint32(rnd.IntN(101))
		r.slowN, r.slowNext = uint16(rnd.IntN(51)), uint16(rnd.IntN(50))
		r.rate = rnd.Float32()
		r.baseFlight = uint32(rnd.IntN(200))
		r.median, r.baseline, r.timeout, r.pausedFor = rnd.Int64N(1e11), rnd.Int64N(1e10), rnd.Int64N(1e11), rnd.Int64()
		for _, p := range []*int64{&r.lastOK, &r.lastSeen} {
			switch rnd.IntN(3) {
			case 0: // never
			case 1:
				*p = base + rnd.Int64N(1e15)
			default:
				*p = base - rnd.Int64N(1e12) // before the breaker was made (a shared clock)
			}
		}
		if got := decodeDormant(r.encode(base), base); got != r {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
		}
	}
}
