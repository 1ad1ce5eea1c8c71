package proxy_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

// answer records a status from shop.test through proxy and returns
// whether Record blamed the proxy.
func answer(p *proxy.Pool, name string, status int) bool {
	return p.Record(proxy.Attempt{Proxy: name, Domain: "shop.test", Status: status})
}

func TestASiteRefusingOneProxyOnlyBlamesThatProxy(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for i := range 3 {
		if !answer(p, "d.test:4", 403) {
			t.Fatalf("403 %d through d was not left to another proxy to explain", i+1)
		}
		if answer(p, "a.test:1", 200) { // the request again, through a
			t.Fatal("a 200 blamed its proxy")
		}
	}
	if s := state(p, "d.test:4"); s.State != circuit.Open || s.Outcomes["blocked"] != 3 {
		t.Fatalf("d after 3 refusals others are spared: %v %v, want ejected, 3 blocked", s.State, s.Outcomes)
	}
	if s := state(p, "a.test:1"); s.State != circuit.Closed || s.Outcomes["carried"] != 3 {
		t.Fatalf("a: %v %v, want closed, 3 carried", s.State, s.Outcomes)
	}
}

func TestASiteRefusingEveryProxyBlamesNone(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	// Four proxies, at most two ejected: refused through three, the site
	// refuses the client.
	for _, name := range []string{"a.test:1", "b.test:2"} {
		if !answer(p, name, 403) {
			t.Fatalf("the site's 403 through %s was not left to another proxy to explain", name)
		}
	}
	if answer(p, "c.test:3", 403) {
		t.Fatal("a 403 through a third proxy blamed it: the site refuses the client")
	}
	// Refusing the client now, every refusal is the site's: none goes
	// again through another proxy (it would cost the site a request).
	for range 20 {
		for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
			if answer(p, name, 403) {
				t.Fatalf("a 403 through %s left to another proxy, once the site refuses the client", name)
			}
		}
	}
	for _, s := range p.Stats() {
		if s.State != circuit.Closed || s.Outcomes["blocked"] != 0 {
			t.Fatalf("%s: %v %v; a site refusing everyone must eject no proxy", s.Name, s.State, s.Outcomes)
		}
	}
}

func TestAFirstRefusalIsChargedOnceAnotherProxyIsAnswered(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	if !answer(p, "d.test:4", 403) {
		t.Fatal("first 403 through d not left to another proxy")
	}
	if s := state(p, "d.test:4"); s.Outcomes["blocked"] != 0 || s.Outcomes["not_judged"] != 1 {
		t.Fatalf("d before any other answer: %v, want 1 not_judged", s.Outcomes)
	}
	answer(p, "a.test:1", 200)
	if s := state(p, "d.test:4"); s.Outcomes["blocked"] != 1 {
		t.Fatalf("d once a is answered: %v, want 1 blocked", s.Outcomes)
	}
	answer(p, "b.test:2", 200)
	if s := state(p, "d.test:4"); s.Outcomes["blocked"] != 1 {
		t.Fatalf("d charged twice for one refusal: %v", s.Outcomes)
	}
}

func TestAProxyAnsweredThenRefusedNoLongerSpeaksForTheSite(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	answer(p, "d.test:4", 403)
	answer(p, "a.test:1", 200)
	// The site now refuses everyone: a's own refusal withdraws its
	// evidence, so the others are blamed only until then.
	blamed := 0
	for _, name := range []string{"b.test:2", "a.test:1", "c.test:3", "d.test:4", "b.test:2"} {
		if answer(p, name, 403) {
			blamed++
		}
	}
	if s := state(p, "b.test:2"); s.Outcomes["blocked"] != 0 {
		t.Fatalf("b: %v, want no blocked charge: the site began to refuse everyone", s.Outcomes)
	}
	// b's and a's, pending until c's refusal, the third, settles that the
	// site refuses the client; none is charged.
	if blamed != 2 {
		t.Fatalf("%d of 5 refusals blamed on their proxy, want 2", blamed)
	}
	for name, want := range map[string]int64{"a.test:1": 0, "c.test:3": 0, "d.test:4": 1} {
		if s := state(p, name); s.Outcomes["blocked"] != want {
			t.Fatalf("%s: %v, want %d blocked", name, s.Outcomes, want)
		}
	}
}

// A tracked request sent again goes through a proxy not yet tried for it,
// whatever other requests took from the rotation meanwhile.
func TestARequestSentAgainTriesAnotherProxy(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), "http://a.test:1", "http://b.test:2"))
	f := p.ProxyFunc()
	mine, _ := http.NewRequest("GET", "http://shop.test/", nil)
	mine, carrier := proxy.Track(mine)
	other, _ := http.NewRequest("GET", "http://shop.test/x", nil)
	var got []string
	for range 2 {
		if _, err := f(mine); err != nil {
			t.Fatal(err)
		}
		got = append(got, carrier())
		f(other) // another request takes the next proxy in between
	}
	if got[0] == got[1] {
		t.Fatalf("the request went through %v: the same proxy twice", got)
	}
	// Every proxy tried, none carries it again: each has told what it
	// could, and the site would get the request twice (chaos seed
	// 1902157672349473202). The error is ErrAllEjected's, and no proxy
	// is named for the try.
	if _, err := f(mine); !errors.Is(err, proxy.ErrAllEjected) || carrier() != "" {
		t.Fatalf("third try: %q %v, want no proxy and ErrAllEjected", carrier(), err)
	}
	// A redirect's hop may go through a proxy its chain used.
	hop, _ := http.NewRequest("GET", "http://shop.test/moved", nil)
	hop = hop.WithContext(mine.Context())
	hop.Response = &http.Response{StatusCode: http.StatusFound}
	if _, err := f(hop); err != nil || carrier() == "" {
		t.Fatalf("a hop after every proxy was tried: %q %v, want a proxy", carrier(), err)
	}
	// Another request goes on through the rotation as usual.
	if _, err := f(other); err != nil {
		t.Fatalf("another request: %v", err)
	}
}

// status records a status from site through proxy and returns whether
// Record blamed the proxy.
func status(p *proxy.Pool, name, site string, code int) bool {
	return p.Record(proxy.Attempt{Proxy: name, Domain: site, Status: code})
}

func TestAProxyFailingWhereTheOthersCarryIsTheOutlier(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for i := range 6 {
		for _, name := range []string{"a.test:1", "b.test:2", "c.test:3"} {
			status(p, name, "shop.test", 200)
		}
		// Each goes again through another proxy: at first to tell (a, b
		// and c answered after it charges d), from the third an outlier.
		if !status(p, "d.test:4", "shop.test", 502) {
			t.Fatalf("bare 502 %d through d, while a, b and c are answered, was the site's", i+1)
		}
	}
	if s := state(p, "d.test:4"); s.State != circuit.Open || s.Ejections != 1 || s.Outcomes["outlier"] < 3 {
		t.Fatalf("d: %v, %d ejections, %v; want ejected once as an outlier", s.State, s.Ejections, s.Outcomes)
	}
}

// A bare 502 through a proxy already ejected as the outlier (a request
// sent before the ejection, answered after it) is the proxy's as its
// earlier ones were: the page goes again through the rotation, and the
// site is not charged, whether it answered the others yet or not. (Seen
// in CI: the fourth 502 of TestAProxyAnsweringBare502IsTheOutlier came
// back after the third had ejected its proxy, and that page was lost.)
func TestAFailureThroughAnEjectedOutlierGoesAgain(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for s := state(p, "d.test:4"); s.State == circuit.Closed; s = state(p, "d.test:4") {
		for _, name := range []string{"a.test:1", "b.test:2", "c.test:3"} {
			status(p, name, "shop.test", 200)
		}
		status(p, "d.test:4", "shop.test", 502)
	}
	// At a site no proxy has answered yet, as at the one answering the
	// others.
	for _, site := range []string{"new.test", "shop.test"} {
		if !status(p, "d.test:4", site, 502) {
			t.Fatalf("a bare 502 from %s through the ejected outlier d was the site's", site)
		}
	}
	if s := state(p, "a.test:1"); s.State != circuit.Closed {
		t.Fatalf("a: %v; want carrying", s.State)
	}
}

// A site that begins to fail, whose first failures come back through one
// proxy before any other's (requests answered out of order), charges
// that proxy nothing: its record looks like an outlier's for a moment,
// but no proxy was answered there since, and the next one fails too.
// (Seen with the proxy tests run four at once under -race:
// TestAFailingStoreThroughAPoolKeepsTheTripBound charged a healthy proxy
// an outlier.)
func TestASiteBeginningToFailThroughOneProxyFirstChargesNone(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for range 2 {
		for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
			status(p, name, "shop.test", 200)
		}
	}
	for range 4 {
		status(p, "d.test:4", "shop.test", 503)
	}
	for _, name := range []string{"a.test:1", "b.test:2", "c.test:3"} {
		if status(p, name, "shop.test", 503) {
			t.Errorf("a 503 through %s, after d's, was blamed on %s", name, name)
		}
	}
	if s := state(p, "d.test:4"); s.State != circuit.Closed || s.Outcomes["outlier"] != 0 {
		t.Fatalf("d: %v %v; the site began to fail, no proxy is charged", s.State, s.Outcomes)
	}
}

func TestASiteFailingThroughEveryProxyBlamesNone(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	again := 0
	for range 10 {
		for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
			status(p, name, "up.test", 200)
			if status(p, name, "down.test", 503) {
				again++
			}
		}
	}
	// Through fresh proxies, each a suspect at its first failure, the
	// failures go again until more suspects than the pool may eject (two)
	// failed: the site fails.
	if again > 2 {
		t.Fatalf("%d of 40 failures of a site failing through every proxy sent again, want at most 2", again)
	}
	for _, s := range p.Stats() {
		if s.State != circuit.Closed || s.Outcomes["outlier"] != 0 {
			t.Fatalf("%s: %v %v; a failing site charges no proxy", s.Name, s.State, s.Outcomes)
		}
	}
}

// A failing site is not its proxy's failure: the failure sent again
// through another proxy fails there too, and no proxy is charged.
func TestASiteFailingThroughTheNextProxyTooIsTheSites(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), "http://a.test:1", "http://b.test:2"))
	if !status(p, "a.test:1", "down.test", 503) {
		t.Fatal("the first failure through a fresh proxy was not left to the next to tell")
	}
	if status(p, "b.test:2", "down.test", 503) {
		t.Fatal("failing through b too, the site's failure was sent again")
	}
	for range 10 {
		if status(p, "a.test:1", "down.test", 503) || status(p, "b.test:2", "down.test", 503) {
			t.Fatal("a site failing through both proxies had a failure sent again")
		}
		status(p, "b.test:2", "up.test", 200)
	}
	for _, s := range p.Stats() {
		if s.Outcomes["outlier"] != 0 {
			t.Fatalf("%s: %v; a failing site charges no proxy", s.Name, s.Outcomes)
		}
	}
}

// Two proxies of four answering 502: each is the outlier against the
// others' median, the other bad one notwithstanding.
func TestTwoBadProxiesDoNotHideEachOther(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for range 5 {
		status(p, "a.test:1", "shop.test", 200)
		status(p, "b.test:2", "shop.test", 200)
		status(p, "c.test:3", "shop.test", 502)
		status(p, "d.test:4", "shop.test", 502)
	}
	for _, name := range []string{"c.test:3", "d.test:4"} {
		if s := state(p, name); s.State != circuit.Open || s.Outcomes["outlier"] == 0 {
			t.Errorf("%s: %v %v, want ejected as an outlier", name, s.State, s.Outcomes)
		}
	}
}

// With half the pool ejected, a site refusing both proxies that still
// carry refuses the client: refusals through proxies that cannot carry
// are not waited for.
func TestARefusalThroughEveryCarryingProxyIsTheSites(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	fail(t, p, "c.test:3", 3, proxy.ConnectFailed)
	fail(t, p, "d.test:4", 3, proxy.ConnectFailed)
	if !answer(p, "a.test:1", 403) {
		t.Fatal("the first refusal was not left to b")
	}
	if answer(p, "b.test:2", 403) {
		t.Fatal("refused by both proxies that carry, the site's refusal was blamed on b")
	}
}

// A refusal through a proxy ejected meanwhile (its request left before)
// says nothing of the site, however few proxies carry.
func TestARefusalThroughAnEjectedProxyIsNotTheSites(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), "http://a.test:1", "http://b.test:2"))
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed) // b ejected: only a carries
	if !answer(p, "b.test:2", 403) {
		t.Fatal("a late 403 through the ejected b was taken as the site refusing the client")
	}
	if s := state(p, "b.test:2"); s.Outcomes["carried"] != 0 {
		t.Fatalf("b: %v; a refusal through it counted as carried", s.Outcomes)
	}
	// a, the one proxy that carries, refused: the site refuses the client.
	if answer(p, "a.test:1", 403) {
		t.Fatal("refused through every proxy that carries, the site's 403 was blamed on a")
	}
}

// An answer to a request sent before a failure was left to tell says
// nothing of the site since: the site may have begun to fail after it.
func TestAnAnswerSentBeforeAFailureChargesNoProxy(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := mustPool(t, exact(clk, "http://a.test:1", "http://b.test:2"))
	if !status(p, "a.test:1", "shop.test", 503) {
		t.Fatal("the first failure through a fresh proxy was not left to the next to tell")
	}
	clk.Advance(10 * time.Millisecond)
	// b's answer to a request sent 50 ms ago, before a's failure.
	p.Record(proxy.Attempt{Proxy: "b.test:2", Domain: "shop.test", Status: 200, Latency: 50 * time.Millisecond})
	if s := state(p, "a.test:1"); s.Outcomes["outlier"] != 0 {
		t.Fatalf("a: %v; charged by an answer sent before its failure", s.Outcomes)
	}
	// One sent after it does tell.
	p.Record(proxy.Attempt{Proxy: "b.test:2", Domain: "shop.test", Status: 200, Latency: time.Millisecond})
	if s := state(p, "a.test:1"); s.Outcomes["outlier"] != 1 {
		t.Fatalf("a: %v; want charged once b answered a request sent after its failure", s.Outcomes)
	}
}

// A failure left to the next proxy to tell is told by that proxy's
// failure, however well that proxy has done elsewhere: the site fails,
// and no later failure there goes again.
func TestTheNextProxysFailureTellsWhateverItsRecord(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), "http://a.test:1", "http://b.test:2"))
	for range 10 {
		status(p, "b.test:2", "up.test", 200) // b does well elsewhere
	}
	if !status(p, "a.test:1", "down.test", 503) {
		t.Fatal("the first failure through a fresh proxy was not left to the next to tell")
	}
	if status(p, "b.test:2", "down.test", 503) {
		t.Fatal("the telling failure was sent again")
	}
	for i := range 5 {
		if status(p, "a.test:1", "down.test", 503) {
			t.Fatalf("failure %d through a went again, though the site failed through b too", i+2)
		}
	}
}

// Two proxies answering 502 of four: the second's failure does not tell
// that the site fails, both being suspects; a healthy proxy's answer
// charges both.
func TestASuspectDoesNotTellForAnother(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	if !status(p, "c.test:3", "shop.test", 502) || !status(p, "d.test:4", "shop.test", 502) {
		t.Fatal("a fresh proxy's 502 was not left to another to tell")
	}
	status(p, "a.test:1", "shop.test", 200)
	for _, name := range []string{"c.test:3", "d.test:4"} {
		if s := state(p, name); s.Outcomes["outlier"] != 1 {
			t.Errorf("%s: %v, want charged once a was answered", name, s.Outcomes)
		}
	}
}

// When every proxy fails most of what it carries (the sites fail, not
// the proxies), no proxy is a suspect: failures count as the sites' and
// none but a site's first goes again.
func TestNoSuspectWhenEveryProxyFails(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
		for range 5 {
			p.Record(proxy.Attempt{Proxy: name, Domain: "other.test", Err: context.DeadlineExceeded})
		}
	}
	again := 0
	for range 5 {
		for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
			if status(p, name, "down.test", 503) {
				again++
			}
		}
	}
	// The site's very first failure goes again, to tell; none after.
	if again > 1 {
		t.Fatalf("%d failures sent again while every proxy fails alike, want at most the first", again)
	}
}

// A site's very first answer, a bare 502, is left to the next proxy even
// through a proxy no worse than the others: nothing yet tells whose it is
// (a healthy store's start page through a 502ing proxy, while every other
// site fails).
func TestASitesFirstFailureIsLeftToTheNextProxy(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
		for range 5 {
			p.Record(proxy.Attempt{Proxy: name, Domain: "down.test", Status: 503})
		}
	}
	if !status(p, "d.test:4", "new.test", 502) {
		t.Fatal("a site's first answer, a 502, was counted as the site's")
	}
	status(p, "a.test:1", "new.test", 200)
	if s := state(p, "d.test:4"); s.Outcomes["outlier"] != 1 {
		t.Fatalf("d: %v, want charged once a was answered by the site", s.Outcomes)
	}
}

// A proxy's first failure at a site that has answered the other proxies
// is left to the next proxy, however the proxies fare elsewhere (a
// healthy store's listing page through a 502ing proxy, while a throttled
// site fails through every proxy). Once the proxy has been answered
// there, its failures there are the site's.
func TestAProxysFirstFailureAtASiteAnsweringOthersIsLeftToTheNextProxy(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
		for range 5 {
			p.Record(proxy.Attempt{Proxy: name, Domain: "down.test", Status: 503})
		}
	}
	for _, name := range []string{"a.test:1", "b.test:2", "c.test:3"} {
		status(p, name, "shop.test", 200)
	}
	if !status(p, "d.test:4", "shop.test", 502) {
		t.Fatal("d's first answer at a site answering a, b and c, a 502, was counted as the site's")
	}
	status(p, "a.test:1", "shop.test", 200)
	if s := state(p, "d.test:4"); s.Outcomes["outlier"] != 1 {
		t.Fatalf("d: %v, want charged once a was answered by the site", s.Outcomes)
	}
	status(p, "c.test:3", "shop.test", 200)
	status(p, "c.test:3", "shop.test", 200)
	if status(p, "c.test:3", "shop.test", 503) {
		t.Fatal("a failure through c, answered there before, went again")
	}
}

// A healthy proxy's first failure at a site answering the others, left to
// the next proxy, is not charged when that proxy is answered: it carries
// most of what it is given, so the failure was the site's moment (a site
// that began to fail, a hang), and charging it at each such site would
// eject a healthy proxy (chaos seed 8494738009972393820: a healthy proxy
// of three held at a throttled, a hanging and a degrading site, the pool
// paused as the client side).
func TestAHealthyProxysFirstFailureAtASiteIsNotCharged(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for range 10 {
		for _, name := range []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4"} {
			status(p, name, "up.test", 200)
		}
	}
	for _, site := range []string{"s1.test", "s2.test", "s3.test", "s4.test"} {
		status(p, "b.test:2", site, 200)
		if !status(p, "a.test:1", site, 503) {
			t.Fatalf("a's first failure at %s, answering b, was not left to the next proxy", site)
		}
		status(p, "c.test:3", site, 200)
	}
	if s := state(p, "a.test:1"); s.State != circuit.Closed || s.Outcomes["outlier"] != 0 {
		t.Fatalf("a, carrying most of what it is given: %v %v, want closed and never charged", s.State, s.Outcomes)
	}
}

// A site that began to fail through several proxies fails, whatever the
// record of a proxy that carried little there before it began: that
// record is mostly the site's failures, and the others', mostly answers
// from before, make it look alone. No proxy is charged.
func TestASiteFailingThroughSeveralProxiesChargesNoneThatCarriedLittle(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for range 6 {
		for _, name := range []string{"b.test:2", "c.test:3", "d.test:4"} {
			status(p, name, "shop.test", 200)
		}
	}
	status(p, "a.test:1", "shop.test", 200)
	if !status(p, "a.test:1", "shop.test", 503) {
		t.Fatal("a's first failure at a site the others answered was not left to the next proxy")
	}
	status(p, "b.test:2", "shop.test", 503) // the next proxy fails there too: the site fails
	for range 2 {
		status(p, "a.test:1", "shop.test", 503)
	}
	if s := state(p, "a.test:1"); s.State != circuit.Closed || s.Outcomes["outlier"] != 0 {
		t.Fatalf("a: %v %v; a site failing through several proxies charges none", s.State, s.Outcomes)
	}
}
