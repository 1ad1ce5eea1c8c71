package breaker

import (
	"strconv"
	"testing"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// The gone set is bounded: it keeps the last goneCap to 2×goneCap URLs,
// forgets the oldest, and forgets a URL whose later answer was not gone.
func TestGoneSetIsBounded(t *testing.T) {
	var s goneSet
	if s.has("u0") {
		t.Fatal("an empty set has u0")
	}
	for i := range 2*goneCap + 1 {
		s.add("u" + strconv.Itoa(i))
	}
	if s.has("u0") {
		t.Error("u0 still remembered after 2×goneCap more URLs")
	}
	if last := "u" + strconv.Itoa(2*goneCap); !s.has(last) {
		t.Errorf("%s, the latest, forgotten", last)
	}
	if n := s.urls.Len(); n > 2*goneCap {
		t.Errorf("%d URLs held, want at most %d", n, 2*goneCap)
	}
	s.remove("u" + strconv.Itoa(2*goneCap))
	if s.has("u" + strconv.Itoa(2*goneCap)) {
		t.Error("a removed URL is still gone")
	}
}

// A URL a clone fetched and found gone (404) is no work left when a later
// Visit of it is refused by a Colly limit: NotVisited lists it as it does
// a gone URL the collector fetched itself.
func TestAGoneURLFetchedByACloneIsNotListedByNotVisited(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 3, Scenario: testserver.Scenario{Mode: testserver.Gone}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b, err := New(Standard())
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	b.Register(c)
	detail := c.Clone() // no callbacks: its requests are gated at the transport
	u := store.ProductURL(1)
	if err := detail.Visit(u); err == nil {
		t.Fatalf("the clone's visit of a 404 page returned no error")
	}
	if store.Count() != 1 {
		t.Fatalf("the store received %d requests, want 1", store.Count())
	}
	if b.NotVisited(u, colly.ErrMaxRequests) {
		t.Fatalf("a URL that answered 404 to the clone was listed unfinished: %+v", b.Unfinished().URLs)
	}
}
