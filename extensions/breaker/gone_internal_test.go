package breaker

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// A URL a clone fetched and found gone (404) is no work left when a later
// Visit of it is refused by a Colly limit: NotVisited lists it as it does
// a gone URL the collector fetched itself.
func TestAGoneURLFetchedByACloneIsNotListedByNotVisited(t *testing.T) {
	store, err := testserver.Start(testserver.Config{Products: 3, Scenario: testserver.Scenario{Mode: testserver.Gone}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b, err := New(Config{Profile: Standard()})
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
