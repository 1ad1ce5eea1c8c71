package validate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/breakwater-crawl/breakwater/extensions/validate"
)

// crawl visits paths on host in order (sync collector), each answered as
// given.
func crawl(t *testing.T, v *validate.Validator, s *site, host string, paths []string) {
	t.Helper()
	c := collector(s, v)
	for _, p := range paths {
		_ = c.Visit("http://" + host + p) // errors are OnError's business here
	}
}

// sequence sets /p/0.. to the given replies and returns their paths.
func sequence(s *site, replies ...reply) []string {
	paths := make([]string, len(replies))
	for i, r := range replies {
		paths[i] = fmt.Sprintf("/p/%d", i)
		s.set(paths[i], r)
	}
	return paths
}

func repeat(r reply, n int) []reply {
	out := make([]reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func concat(rs ...[]reply) []reply {
	var out []reply
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

var (
	good     = reply{body: product(1, 38000)}
	changed  = reply{body: restyled(1, 38000)}
	shell    = reply{body: consent()}
	down     = reply{status: 503, body: []byte("upstream")}
	timedOut = reply{err: timeout{}}
)

type brokenLog struct{ got []validate.BrokenDomain }

func (b *brokenLog) hook(d validate.BrokenDomain) { b.got = append(b.got, d) }

func TestTemplateChangeIsDiagnosedBrokenOnceWithEvidence(t *testing.T) {
	var hooked brokenLog
	var logs bytes.Buffer
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}, OnBroken: hooked.hook, Logger: zerolog.New(&logs)})
	s := newSite()
	paths := sequence(s, concat(repeat(good, 5), repeat(changed, 6))...)
	crawl(t, v, s, "Shop.TEST:8080", paths)

	if len(hooked.got) != 1 {
		t.Fatalf("OnBroken called %d times, want once", len(hooked.got))
	}
	b := hooked.got[0]
	if b.Domain != "shop.test:8080" || !reflect.DeepEqual(b.Selectors, []string{titleSel}) || b.ValidBefore != 5 || len(b.Pages) != 3 {
		t.Fatalf("diagnosis %+v", b)
	}
	for i, e := range b.Pages {
		if want := fmt.Sprintf("http://shop.test:8080/p/%d", 5+i); e.URL != want || e.Status != 200 || e.Bytes != len(changed.body) {
			t.Errorf("evidence %d: %+v, want %s", i, e, want)
		}
	}
	if got := v.Broken(); !reflect.DeepEqual(got, hooked.got) {
		t.Fatalf("Broken() = %+v, hook got %+v", got, hooked.got)
	}
	if err := b.Err(); !errors.Is(err, validate.ErrSelectorBroken) || !strings.Contains(err.Error(), `"div.product h1.title"`) {
		t.Fatalf("Err() = %v", err)
	}
	var events []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var e map[string]any
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if e["event"] == "selector_broken" {
			events = append(events, e)
		}
	}
	if len(events) != 1 || events[0]["domain"] != "shop.test:8080" || events[0]["level"] != "error" || events[0]["pages"] != 3.0 {
		t.Fatalf("selector_broken events: %v", events)
	}
}

func TestWrongSelectorFromTheStartIsBrokenWithNoValidBefore(t *testing.T) {
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require("div.product h1.headline")}})
	s := newSite()
	crawl(t, v, s, "shop.test", sequence(s, repeat(good, 3)...))
	got := v.Broken()
	if len(got) != 1 || got[0].ValidBefore != 0 || got[0].Selectors[0] != "div.product h1.headline" {
		t.Fatalf("Broken() = %+v", got)
	}
}

// TestDegradingTargetIsNeverBroken: consent shells, 5xx, timeouts and
// shrinking bodies are the target's trouble, however many there are, and
// they break any run of structure evidence around them.
func TestDegradingTargetIsNeverBroken(t *testing.T) {
	shrunk := reply{body: restyled(1, 12000)} // above the floor, a third of a page
	cases := map[string][]reply{
		"consent shells":             concat(repeat(good, 3), repeat(shell, 10)),
		"503s":                       concat(repeat(good, 3), repeat(down, 10)),
		"timeouts":                   concat(repeat(good, 3), repeat(timedOut, 10)),
		"shrinking bodies":           concat(repeat(good, 3), repeat(shrunk, 10)),
		"503s between changed pages": concat(repeat(good, 3), []reply{changed, changed, down, changed, changed, down, changed, changed}),
		"timeouts between changed":   concat(repeat(good, 3), []reply{changed, changed, timedOut, changed, changed, timedOut, changed}),
		"shells between changed":     concat(repeat(good, 3), []reply{changed, changed, shell, changed, changed, shell, changed}),
		"valid between changed":      concat(repeat(good, 3), []reply{changed, changed, good, changed, changed, good, changed}),
	}
	for name, replies := range cases {
		t.Run(name, func(t *testing.T) {
			var hooked brokenLog
			v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}, OnBroken: hooked.hook})
			s := newSite()
			crawl(t, v, s, "shop.test", sequence(s, replies...))
			if len(hooked.got) != 0 || len(v.Broken()) != 0 {
				t.Fatalf("diagnosed broken: %+v", v.Broken())
			}
		})
	}
}

// TestSelfInflictedAndClientErrorsDoNotBreakEvidence: a breaker's refusal
// (an error the transport returns before dialling), 404s and 429s say
// nothing about the template, so three changed pages around them still
// diagnose.
func TestSelfInflictedAndClientErrorsDoNotBreakEvidence(t *testing.T) {
	refused := reply{err: errors.New("breaker: circuit open for shop.test")}
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	s := newSite()
	crawl(t, v, s, "shop.test", sequence(s, good, changed, refused, reply{status: 404}, changed, reply{status: 429}, changed))
	if got := v.Broken(); len(got) != 1 || len(got[0].Pages) != 3 {
		t.Fatalf("Broken() = %+v", got)
	}
}

func TestDiagnosisIsPerDomain(t *testing.T) {
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	s := newSite()
	s.set("/good", good).set("/changed", changed)
	c := collector(s, v)
	c.AllowURLRevisit = true
	for range 4 {
		_ = c.Visit("http://a.test/changed")
		_ = c.Visit("http://b.test/good")
		_ = c.Visit("http://b.test:8081/changed") // another port is another domain
	}
	got := v.Broken()
	if len(got) != 2 || got[0].Domain != "a.test" || got[1].Domain != "b.test:8081" {
		t.Fatalf("Broken() = %+v", got)
	}
}

func TestBrokenAfterSetsTheWindow(t *testing.T) {
	for _, n := range []int{1, 5} {
		v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}, BrokenAfter: n})
		s := newSite()
		paths := sequence(s, concat(repeat(good, 2), repeat(changed, n))...)
		c := collector(s, v)
		for i, p := range paths {
			_ = c.Visit("http://shop.test" + p)
			if diagnosed := len(v.Broken()) == 1; diagnosed != (i == len(paths)-1) {
				t.Fatalf("BrokenAfter(%d): after page %d diagnosed=%v", n, i+1, diagnosed)
			}
		}
	}
}

// TestIdleDomainsKeepACompactRecord: a domain with no evidence under way
// (its pages valid, or failing for the target's reasons) keeps only its
// valid count and recent page sizes, encoded, not a whole record; one
// whose evidence is under way or diagnosed keeps it whole.
func TestIdleDomainsKeepACompactRecord(t *testing.T) {
	const n = 500
	s := newSite()
	paths := sequence(s, good, good)
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel, priceSel)}})
	for i := range n {
		crawl(t, v, s, fmt.Sprintf("shop-%d.test", i), paths)
	}
	sf := newSite()
	crawl(t, v, sf, "flaky.test", sequence(sf, good, down))
	if whole, compact := v.DiagnosisRecords(); whole != 0 || compact != n+1 {
		t.Fatalf("after %d domains of valid pages and one degrading: %d whole records, %d compact, want 0 and %d", n, whole, compact, n+1)
	}
	s2 := newSite()
	crawl(t, v, s2, "changing.test", sequence(s2, good, changed))
	if whole, _ := v.DiagnosisRecords(); whole != 1 {
		t.Fatalf("a domain with evidence under way: %d whole records, want 1", whole)
	}
}
