package breaker_test

import (
	"io"
	"net/http"
	"strings"

	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// transitionLog collects what OnTransition hands over, evidence left out:
// a compacted domain forgets the latencies of its window's successes, and
// nothing else.
type transitionLog struct {
	mu  sync.Mutex
	got []string
}

func (r *transitionLog) hook(t circuit.Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%s %s→%s %s at %s retry %s trips %d", t.Key, t.From, t.To, t.Reason,
		t.At.Format(time.TimeOnly), t.RetryAt.Format(time.TimeOnly), t.Trips))
}

// TestCompactionChangesNoDecision drives two breakers through the same
// random sequence of permits, outcomes, clock advances and sweeps: one
// keeping every domain whole (today's), one compacting idle domains. Every
// permit, refusal and transition must be the same, and so must every
// domain's state, trips and counts at the end. (Not its tracker's figures
// or its adaptive timeout: a compacted domain recomputes those from the
// latencies seen since it was revived; see Config.IdleTTL.)
func TestCompactionChangesNoDecision(t *testing.T) {
	for _, p := range []breaker.Profile{breaker.Standard(), breaker.Aggressive(), breaker.Conservative()} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(p.Name+"/"+strconv.FormatUint(seed, 10), func(t *testing.T) { compareCompaction(t, p, seed) })
		}
	}
}

func compareCompaction(t *testing.T, p breaker.Profile, seed uint64) {
	const ttl = 10 * time.Second
	rnd := rand.New(rand.NewPCG(seed, 7))
	type side struct {
		b     *breaker.Breaker
		clk   *clocktest.Fake
		trans transitionLog
	}
	mk := func(ttl time.Duration) *side {
		s := &side{clk: clocktest.NewFake(epoch)}
		jitter := rand.New(rand.NewPCG(seed, 11))
		s.b = newBreaker(t, breaker.WithRand(breaker.Config{Profile: p, Clock: s.clk, IdleTTL: ttl, OnTransition: s.trans.hook}, jitter.Float64))
		return s
	}
	whole, compact := mk(-1), mk(ttl)
	sides := []*side{whole, compact}

	domains := hosts(40)
	type pair struct {
		host string
		t    [2]breaker.Ticket
	}
	var pending []pair
	compacted := 0
	for step := range 20000 {
		switch r := rnd.IntN(100); {
		case r < 45: // ask for a permit
			h := domains[min(rnd.IntN(len(domains)), rnd.IntN(len(domains)))] // some domains far busier
			var pr pair
			pr.host = h
			var errs [2]error
			for i, s := range sides {
				pr.t[i], errs[i] = s.b.Allow(h)
			}
			if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
				t.Fatalf("step %d, Allow(%s): whole says %v, compacting says %v", step, h, errs[0], errs[1])
			}
			if errs[0] == nil {
				pending = append(pending, pr)
			}
		case r < 90 && len(pending) > 0: // an outcome comes back
			i := rnd.IntN(len(pending))
			pr := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			o := randomOutcome(rnd)
			for j, s := range sides {
				s.b.Record(pr.t[j], o)
			}
		case r < 97: // time passes
			d := time.Duration(rnd.IntN(int(3 * time.Second)))
			if rnd.IntN(10) == 0 {
				d = time.Duration(rnd.Int64N(int64(3 * ttl)))
			}
			for _, s := range sides {
				s.clk.Advance(d)
			}
		default: // a sweep
			before := compact.b.Dormant()
			for _, s := range sides {
				s.b.Compact()
			}
			if n := compact.b.Dormant(); n > before {
				compacted += n - before
			}
		}
	}
	if whole.b.Dormant() != 0 {
		t.Fatalf("the breaker with a negative IdleTTL compacted %d domains", whole.b.Dormant())
	}
	if compacted == 0 {
		t.Fatalf("no domain was ever compacted: the comparison proves nothing")
	}
	if !reflect.DeepEqual(whole.trans.got, compact.trans.got) {
		t.Fatalf("transitionLog differ:\nwhole:      %q\ncompacting: %q", whole.trans.got, compact.trans.got)
	}
	ws, cs := whole.b.Stats(), compact.b.Stats()
	if len(ws) != len(cs) {
		t.Fatalf("Stats: %d domains whole, %d compacting", len(ws), len(cs))
	}
	for i := range ws {
		w, c := ws[i], cs[i]
		if w.Domain != c.Domain || w.State != c.State || w.Trips != c.Trips || w.Refused != c.Refused ||
			!reflect.DeepEqual(w.Outcomes, c.Outcomes) || w.Pace.Pauses != c.Pace.Pauses {
			t.Fatalf("Stats of %s differ:\nwhole:      %+v\ncompacting: %+v", w.Domain, w, c)
		}
	}
	t.Logf("%d transitionLog, %d compactions, %d domains compacted at the end", len(whole.trans.got), compacted, compact.b.Dormant())
}

// randomOutcome is mostly successes of a steady latency (now and then a
// slow one), some failures, and the classes that are not counted.
func randomOutcome(rnd *rand.Rand) circuit.Result {
	lat := 40*time.Millisecond + time.Duration(rnd.IntN(20))*time.Millisecond
	switch r := rnd.IntN(100); {
	case r < 70:
		return circuit.Result{Class: circuit.Success, Latency: lat}
	case r < 72:
		return circuit.Result{Class: circuit.Success, Latency: 6 * time.Second} // a slow call
	case r < 84:
		return circuit.Result{Class: circuit.Degraded, Latency: lat}
	case r < 88:
		return circuit.Result{Class: circuit.Invalid, Latency: lat}
	case r < 92:
		return circuit.Result{Class: circuit.Throttled, Latency: lat}
	case r < 95:
		return circuit.Result{Class: circuit.Blocked, Latency: lat}
	case r < 98:
		return circuit.Result{Class: circuit.Gone, Latency: lat}
	}
	return circuit.Result{Class: circuit.Excluded, Latency: lat}
}

// memTransport answers every request from memory with a small page: many
// hosts, no sockets.
type memTransport struct{}

func (memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body := "<html><head><title>" + r.URL.Host + r.URL.Path + "</title></head><body>ok</body></html>"
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/html"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: r}, nil
}

// TestIdleDomainsCompactAndComeBackWhole crawls many hosts through Colly,
// lets them go idle, sweeps, and crawls them again while sweeps keep
// running: every domain is compacted, comes back with its counts, and no
// request is lost or counted twice.
func TestIdleDomainsCompactAndComeBackWhole(t *testing.T) {
	const n, ttl = 300, 10 * time.Second
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk, IdleTTL: ttl})
	crawl := func(page int) {
		c := colly.NewCollector(colly.Async(true))
		c.WithTransport(memTransport{})
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8}); err != nil {
			t.Fatal(err)
		}
		b.Register(c)
		for i := range n {
			if err := c.Visit(fmt.Sprintf("http://shop-%d.test/p/%d", i, page)); err != nil {
				t.Fatal(err)
			}
		}
		c.Wait()
	}
	crawl(1)
	crawl(2)
	b.Compact()
	clk.Advance(ttl)
	b.Compact()
	if got := b.Dormant(); got != n {
		t.Fatalf("after %v idle, %d of %d domains compacted", ttl, got, n)
	}
	stop := sweepRacing(clk, b, ttl/3) // sweeps racing the revivals
	crawl(3)
	stop()
	stats := b.Stats()
	if len(stats) != n {
		t.Fatalf("Stats lists %d domains, want %d", len(stats), n)
	}
	for _, s := range stats {
		if s.Outcomes[circuit.Success.String()] != 3 || s.State != circuit.Closed {
			t.Fatalf("%s: %d successes, %s; want 3, closed", s.Domain, s.Outcomes[circuit.Success.String()], s.State)
		}
	}
}

// TestNoOutcomeIsLostToACompaction races outcomes against sweeps: goroutines
// ask for permits and record successes on a few domains while another
// advances the clock and sweeps without pause. Every recorded success must
// be in Stats at the end, whether its domain ended whole or compacted: a
// domain compacted while an outcome was being recorded would drop it.
func TestNoOutcomeIsLostToACompaction(t *testing.T) {
	const ttl, workers, perWorker = 10 * time.Second, 4, 5000
	clk := clocktest.NewFake(epoch)
	b := newBreaker(t, breaker.Config{Profile: breaker.Standard(), Clock: clk, IdleTTL: ttl})
	domains := hosts(8)
	stop := sweepRacing(clk, b, ttl/2)
	var wg sync.WaitGroup
	var recorded [workers]int64
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				tk, err := b.Allow(domains[(w+i)%len(domains)])
				if err != nil {
					t.Errorf("Allow: %v", err)
					return
				}
				b.Record(tk, circuit.Result{Class: circuit.Success, Latency: 40 * time.Millisecond})
				recorded[w]++
			}
		})
	}
	wg.Wait()
	stop()
	var want, got int64
	for _, n := range recorded {
		want += n
	}
	for _, s := range b.Stats() {
		got += s.Outcomes[circuit.Success.String()]
	}
	if got != want {
		t.Fatalf("Stats count %d successes, %d were recorded: %d lost to compactions", got, want, want-got)
	}
	t.Logf("%d successes recorded and counted, %d domains compacted at the end", got, b.Dormant())
}

// sweepRacing advances clk by step and sweeps b, without pause, until the
// returned stop is called; stop returns once the sweeping has ended.
func sweepRacing(clk *clocktest.Fake, b *breaker.Breaker, step time.Duration) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
				clk.Advance(step)
				b.Compact()
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
