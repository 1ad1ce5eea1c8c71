package visitclaim_test

import (
	"errors"
	"testing"

	"github.com/breakwater-crawl/breakwater/internal/visitclaim"
	"github.com/gocolly/colly/v2"
)

func TestOneCallerIsNeverContested(t *testing.T) {
	var tb visitclaim.Table
	tb.Add(1)
	if held, lost := tb.Settle(1); !held || lost {
		t.Fatalf("Settle = %v, %v; want held, not lost", held, lost)
	}
	if tb.Len() != 0 || tb.Join(1) != visitclaim.Absent {
		t.Fatalf("a settled lone claim is kept: %d claims", tb.Len())
	}
	if held, _ := tb.Settle(1); held {
		t.Fatal("Visited alone found a claim")
	}
}

func TestTheFirstVisitedOfAContestedIDWins(t *testing.T) {
	var tb visitclaim.Table
	tb.Add(1)
	if s := tb.Join(1); s != visitclaim.Joined {
		t.Fatalf("Join = %v; want Joined", s)
	}
	if _, lost := tb.Settle(1); lost {
		t.Fatal("the first Visited lost")
	}
	if _, lost := tb.Settle(1); !lost {
		t.Fatal("the second Visited won too")
	}
	if tb.Len() != 0 {
		t.Fatalf("%d claims left once both callers settled", tb.Len())
	}
}

func TestAClaimDroppedBeforeVisitedIsGone(t *testing.T) {
	var tb visitclaim.Table
	tb.Add(1)
	tb.Add(1)
	tb.Drop(1) // the second caller was told "visited" by the store
	if _, lost := tb.Settle(1); lost {
		t.Fatal("the only caller left lost")
	}
	if tb.Len() != 0 {
		t.Fatalf("%d claims left", tb.Len())
	}
}

// HasVisited's claim is never settled: the Visit after it wins, and the
// ID is visited from then on.
func TestAfterHasVisitedTheVisitWinsAndTheIDIsSettled(t *testing.T) {
	var tb visitclaim.Table
	tb.Add(1)                                    // HasVisited
	if s := tb.Join(1); s != visitclaim.Joined { // Visit's IsVisited
		t.Fatalf("Join = %v", s)
	}
	if _, lost := tb.Settle(1); lost {
		t.Fatal("the Visit after HasVisited lost")
	}
	if s := tb.Join(1); s != visitclaim.Settled {
		t.Fatalf("Join after the visit = %v; want Settled", s)
	}
}

func TestErrClaimedIsAlreadyVisited(t *testing.T) {
	var v *colly.AlreadyVisitedError
	if !errors.As(visitclaim.ErrClaimed, &v) || v.Destination == nil || v.Error() == "" {
		t.Fatalf("errors.As = %+v", v)
	}
}
