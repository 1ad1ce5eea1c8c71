package collyx

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gocolly/colly/v2"
)

// LimitSlots finds the channel Colly's Do fills for a request of the
// matching rule: while a request is inside the transport the rule of its
// host holds one value, and a slot taken out there lets another request of
// the rule leave.
func TestLimitSlotsAreTheRulesOwn(t *testing.T) {
	if got := LimitSlots(colly.NewCollector(), "a.test"); got != nil {
		t.Fatal("a collector without rules has slots")
	}
	release := make(chan struct{})
	started := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- r.URL.Path
		if r.URL.Path == "/hang" {
			<-release
		}
	}))
	defer srv.Close()
	host := mustHost(t, srv.URL)
	c := colly.NewCollector(colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*other*", Parallelism: 3}); err != nil {
		t.Fatal(err)
	}
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	slots := LimitSlots(c, host)
	if slots == nil || cap(slots) != 1 {
		t.Fatalf("slots of %s: %v (cap %d); want the * rule's, of capacity 1", host, slots, cap(slots))
	}
	if other := LimitSlots(c, "other.test"); other == nil || cap(other) != 3 {
		t.Fatalf("other.test: want the first matching rule's slots, of capacity 3")
	}
	c.OnRequestHeaders(func(r *colly.Request) {
		if r.URL.Path == "/hang" {
			if len(slots) != 1 {
				t.Errorf("inside Do the rule holds %d values; want 1", len(slots))
			}
			<-slots // lend the slot while the site hangs
		}
	})
	c.OnResponse(func(r *colly.Response) {})
	if err := c.Visit(srv.URL + "/hang"); err != nil {
		t.Fatal(err)
	}
	if p := <-started; p != "/hang" {
		t.Fatalf("first request %s", p)
	}
	if err := c.Visit(srv.URL + "/next"); err != nil {
		t.Fatal(err)
	}
	// With one slot, /next leaves only because /hang lent its slot.
	if p := <-started; p != "/next" {
		t.Fatalf("second request %s", p)
	}
	slots <- true // put it back before /hang's Do takes one out
	close(release)
	c.Wait()
	if len(slots) != 0 {
		t.Fatalf("%d slots still taken after the crawl", len(slots))
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
