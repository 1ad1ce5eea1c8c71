package storage_test

import (
	"errors"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/gocolly/colly/v2"
)

func TestOneCallerIsNeverContested(t *testing.T) {
	var tb storage.VisitClaims
	tb.Add(1)
	if held, lost := tb.Settle(1); !held || lost {
		t.Fatalf("Settle = %v, %v; want held, not lost", held, lost)
	}
	if held, _ := tb.Join(1); held {
		t.Fatal("a settled lone claim is kept")
	}
	if held, _ := tb.Settle(1); held {
		t.Fatal("Visited alone found a claim")
	}
}

func TestTheFirstVisitedOfAContestedIDWins(t *testing.T) {
	var tb storage.VisitClaims
	tb.Add(1)
	if held, visited := tb.Join(1); !held || visited {
		t.Fatalf("Join = %v, %v; want joined: held, not visited", held, visited)
	}
	if _, lost := tb.Settle(1); lost {
		t.Fatal("the first Visited lost")
	}
	if _, lost := tb.Settle(1); !lost {
		t.Fatal("the second Visited won too")
	}
	if held, _ := tb.Join(1); held {
		t.Fatal("a claim is left once both callers settled")
	}
}

func TestAClaimDroppedBeforeVisitedIsGone(t *testing.T) {
	var tb storage.VisitClaims
	tb.Add(1)
	tb.Add(1)
	tb.Drop(1) // the second caller was told "visited" by the store
	if _, lost := tb.Settle(1); lost {
		t.Fatal("the only caller left lost")
	}
	if held, _ := tb.Join(1); held {
		t.Fatal("a claim is left")
	}
}

// HasVisited's claim is never settled: the Visit after it wins, and the
// ID is visited from then on.
func TestAfterHasVisitedTheVisitWinsAndTheIDIsSettled(t *testing.T) {
	var tb storage.VisitClaims
	tb.Add(1)                                          // HasVisited
	if held, visited := tb.Join(1); !held || visited { // Visit's IsVisited
		t.Fatalf("Join = %v, %v; want joined: held, not visited", held, visited)
	}
	if _, lost := tb.Settle(1); lost {
		t.Fatal("the Visit after HasVisited lost")
	}
	if held, visited := tb.Join(1); !held || !visited {
		t.Fatalf("Join after the visit = %v, %v; want settled: held, visited", held, visited)
	}
}

func TestErrClaimedIsAlreadyVisited(t *testing.T) {
	var v *colly.AlreadyVisitedError
	if !errors.As(storage.ErrClaimed, &v) || v.Destination == nil || v.Error() == "" {
		t.Fatalf("errors.As = %+v", v)
	}
}
