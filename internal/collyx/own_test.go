package collyx

import (
	"slices"
	"testing"

	"github.com/gocolly/colly/v2"
)

type ownExt struct{ ran *[]string }

func (e ownExt) onRequest(*colly.Request) { *e.ran = append(*e.ran, "own method") }

// TestOnlyOwnAfterKnowsWhatCollyRunsNext: Colly runs every OnRequest
// callback in the order registered, those after one that aborts included,
// and never runs OnError for the aborted request; OnlyOwnAfter tells
// whether any of those after a given one is the program's.
func TestOnlyOwnAfterKnowsWhatCollyRunsNext(t *testing.T) {
	c, _ := stubCollector(t, &stubTransport{body: "<html></html>", ctype: "text/html"})
	var ran []string
	if n := RequestCallbackCount(c); n != 0 || OnlyOwnAfter(c, 0) {
		t.Fatalf("a new collector: %d callbacks, OnlyOwnAfter(0) %v; want 0, false", n, OnlyOwnAfter(c, 0))
	}
	c.OnRequest(Own(func(r *colly.Request) { ran = append(ran, "own"); r.Abort() }))
	c.OnRequest(Own(ownExt{&ran}.onRequest))
	if !OnlyOwnAfter(c, 0) || !OnlyOwnAfter(c, 1) {
		t.Fatal("only Breakwater's callbacks registered, and OnlyOwnAfter says the program's follow")
	}
	c.OnRequest(func(*colly.Request) { ran = append(ran, "program") })
	c.OnRequest(Own(ownExt{&ran}.onRequest)) // another value of a marked method
	if OnlyOwnAfter(c, 0) || OnlyOwnAfter(c, 1) || !OnlyOwnAfter(c, 2) || !OnlyOwnAfter(c, 3) || OnlyOwnAfter(c, 4) || OnlyOwnAfter(c, -1) {
		t.Errorf("OnlyOwnAfter 0..4: %v %v %v %v %v; want false false true true false",
			OnlyOwnAfter(c, 0), OnlyOwnAfter(c, 1), OnlyOwnAfter(c, 2), OnlyOwnAfter(c, 3), OnlyOwnAfter(c, 4))
	}
	if n := RequestCallbackCount(c); n != 4 {
		t.Errorf("RequestCallbackCount %d, want 4", n)
	}
	errored := false
	c.OnError(func(*colly.Response, error) { errored = true })
	if err := c.Visit("http://shop.test/a"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"own", "own method", "program", "own method"}; !slices.Equal(ran, want) || errored {
		t.Errorf("Colly ran %v for an aborted request, OnError %v; want %v, no OnError", ran, errored, want)
	}
	if dc := c.Clone(); RequestCallbackCount(dc) != 0 {
		t.Error("a clone has its collector's OnRequest callbacks")
	}
	if RequestCallbackCount(nil) != -1 || OnlyOwnAfter(nil, 0) {
		t.Error("a nil collector has OnRequest callbacks")
	}
}

// BenchmarkOnlyOwnAfter is the breaker's check before an early refusal,
// with its own callback, the checkpoint's and one of the program's.
//
//	go test -run '^$' -bench OnlyOwnAfter -benchmem ./internal/collyx/
func BenchmarkOnlyOwnAfter(b *testing.B) {
	c := colly.NewCollector()
	var ran []string
	c.OnRequest(Own(func(*colly.Request) {}))
	c.OnRequest(Own(ownExt{&ran}.onRequest))
	c.OnRequest(func(*colly.Request) {})
	b.ReportAllocs()
	for b.Loop() {
		if OnlyOwnAfter(c, 0) {
			b.Fatal("the program's callback is not seen")
		}
	}
}
