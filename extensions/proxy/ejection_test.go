package proxy_test

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

var four = []string{"http://a.test:1", "http://b.test:2", "http://c.test:3", "http://d.test:4"}

func TestRotationIsRoundRobinLikeCollys(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	var got []string
	for range 8 {
		n, err := next(t, p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	want := []string{"a.test:1", "b.test:2", "c.test:3", "d.test:4", "a.test:1", "b.test:2", "c.test:3", "d.test:4"}
	if !slices.Equal(got, want) {
		t.Fatalf("rotation %v, want %v", got, want)
	}
}

func TestProxyEjectedAfterThreeFailuresInARow(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var ejections []proxy.Snapshot
	cfg := exact(clk, four...)
	cfg.OnEject = func(s proxy.Snapshot) { ejections = append(ejections, s) }
	p := mustPool(t, cfg)
	fail(t, p, "http://b.test:2", 2, proxy.ConnectFailed)
	if p.Ejected("b.test:2") {
		t.Fatal("ejected after 2 failures; the default needs 3 in a row")
	}
	fail(t, p, "http://b.test:2", 1, proxy.ConnectFailed)
	if !p.Ejected("b.test:2") {
		t.Fatal("not ejected after 3 failures in a row")
	}
	if len(ejections) != 1 || ejections[0].Name != "b.test:2" || ejections[0].State != circuit.Open ||
		!ejections[0].RetryAt.Equal(t0.Add(30*time.Second)) || ejections[0].Ejections != 1 {
		t.Fatalf("OnEject got %+v, want b.test:2 open until +30s, 1 ejection", ejections)
	}
	for range 6 {
		if n, _ := next(t, p); n == "b.test:2" {
			t.Fatal("the rotation gave out an ejected proxy")
		}
	}
}

func TestSuccessesBetweenFailuresKeepAProxyIn(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	for range 4 { // 2 failures, 1 carried: never 3 in a row, never 5 of 10
		fail(t, p, "a.test:1", 1, proxy.ConnectFailed)
		fail(t, p, "a.test:1", 1, proxy.Carried)
		fail(t, p, "a.test:1", 1, proxy.Carried)
	}
	if p.Ejected("a.test:1") {
		t.Fatal("a proxy failing 1 in 3 was ejected")
	}
}

func TestNotJudgedNeverEjects(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	fail(t, p, "a.test:1", 50, proxy.NotJudged)
	s := state(p, "a.test:1")
	if s.State != circuit.Closed || s.Outcomes[proxy.NotJudged.String()] != 50 {
		t.Fatalf("after 50 NotJudged: %+v, want closed with 50 counted", s)
	}
}

func TestEveryProxyEjectedFailsTheRequestVisibly(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var said []error
	cfg := exact(clk, "http://user:secret@only.test:8080")
	cfg.OnClientSide = func(err error) { said = append(said, err) }
	p := mustPool(t, cfg)
	fail(t, p, "http://user:secret@only.test:8080", 3, proxy.AuthFailed)
	_, err := next(t, p)
	if !errors.Is(err, proxy.ErrAllEjected) {
		t.Fatalf("ProxyFunc with every proxy ejected: %v, want ErrAllEjected", err)
	}
	if want := "2026-12-04T12:00:30Z"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say when the probe is due (%s)", err, want)
	}
	if cs := p.ClientSide(); !errors.Is(cs, proxy.ErrClientSide) || len(said) != 1 {
		t.Fatalf("ClientSide %v, hook calls %d: want ErrClientSide once", cs, len(said))
	}
	if strings.Contains(said[0].Error(), "secret") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("credentials in an error: %q / %q", said[0], err)
	}
}

func TestRecordOfAProxyNotInThePoolRecordsNothing(t *testing.T) {
	p := mustPool(t, exact(clocktest.NewFake(t0), four...))
	refused := &net.OpError{Op: "proxyconnect", Net: "tcp", Err: errors.New("connection refused")}
	if p.Record(proxy.Attempt{Proxy: "http://user:secret@elsewhere.test:9", Domain: "shop.test", Err: refused}) {
		t.Fatal("Record blamed a proxy not in the pool")
	}
	for _, s := range p.Stats() {
		if len(s.Outcomes) != 0 {
			t.Fatalf("%s counts %v after a record for another proxy", s.Name, s.Outcomes)
		}
	}
	if p.Ejected("http://elsewhere.test:9") {
		t.Fatal("a proxy not in the pool reported ejected")
	}
}

// More proxies failing than may be ejected: the client side is suspect,
// and the pool pauses, handing out no proxy (to ProxyFunc or Ejected's
// askers) for the cooldown, instead of trying every request through
// proxies that fail; then the rotation goes on.
func TestTheClientSideSuspectPausesThePool(t *testing.T) {
	clk := clocktest.NewFake(t0)
	p := mustPool(t, exact(clk, four...))
	fail(t, p, "a.test:1", 3, proxy.ConnectFailed)
	fail(t, p, "b.test:2", 3, proxy.ConnectFailed)
	fail(t, p, "c.test:3", 3, proxy.ConnectFailed) // held: two of four are ejected already
	_, err := next(t, p)
	if !errors.Is(err, proxy.ErrAllEjected) || !errors.Is(err, proxy.ErrClientSide) {
		t.Fatalf("ProxyFunc once the client side is suspect: %v, want ErrAllEjected and ErrClientSide", err)
	}
	if !p.Ejected("d.test:4") {
		t.Fatal("Ejected handed out d during the pause")
	}
	clk.Advance(29 * time.Second)
	if _, err := next(t, p); err == nil {
		t.Fatal("a proxy handed out before the pause's end")
	}
	clk.Advance(time.Second)
	if got, err := next(t, p); err != nil {
		t.Fatalf("after the pause: %v, want the rotation going on", err)
	} else {
		t.Logf("after the pause: %s", got)
	}
}
