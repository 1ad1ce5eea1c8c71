package checkpoint

import (
	"errors"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/gocolly/colly/v2"
)

// Two goroutines of a collector that find the same new link at once make
// these calls, in this order: both are told it is new, and the one whose
// Visited comes second is told it was visited after all, so that Colly
// does not fetch it twice.
func TestTwoChecksOfOneNewURLLetOneThrough(t *testing.T) {
	cp, err := New(memory.New(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := collyStorage{cp}
	const id = 7
	for who := range 2 {
		if v, err := s.IsVisited(id); v || err != nil {
			t.Fatalf("IsVisited #%d = %v, %v; want a new URL", who, v, err)
		}
	}
	if err := s.Visited(id); err != nil {
		t.Fatalf("the first Visited: %v", err)
	}
	var visited *colly.AlreadyVisitedError
	if err := s.Visited(id); !errors.As(err, &visited) {
		t.Fatalf("the second Visited = %v; want an AlreadyVisitedError, so its request is not made", err)
	} else if visited.Destination == nil || !strings.Contains(err.Error(), "already visited") {
		t.Fatalf("the error %q (destination %v) does not say what happened, or cannot be printed", err, visited.Destination)
	}
	if v, err := s.IsVisited(id); !v || err != nil {
		t.Fatalf("IsVisited after = %v, %v; want visited", v, err)
	}
	if held, _ := cp.claims.Join(id); held {
		t.Error("a claim is left once both calls were made")
	}
}

// HasVisited asks IsVisited alone. The usual "if !c.HasVisited(u) {
// c.Visit(u) }" still visits u, and nothing that follows is refused.
func TestHasVisitedThenVisitStillVisits(t *testing.T) {
	cp, err := New(memory.New(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := collyStorage{cp}
	const id = 9
	if v, _ := s.IsVisited(id); v { // HasVisited
		t.Fatal("new URL visited")
	}
	if v, _ := s.IsVisited(id); v { // Visit: requestCheck
		t.Fatal("HasVisited made the URL visited")
	}
	if err := s.Visited(id); err != nil {
		t.Fatalf("Visit after HasVisited refused: %v", err)
	}
	if v, _ := s.IsVisited(id); !v {
		t.Fatal("not visited after Visited")
	}
}
