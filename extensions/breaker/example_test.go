package breaker_test

import (
	"fmt"
	"os"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
)

// A store that fails from its 31st request on: the standard profile lets
// 40 requests through, then refuses the rest without touching the network.
func Example() {
	store, _ := testserver.Start(testserver.Config{Products: 60,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30}})
	defer store.Close()

	refused := 0
	b, err := breaker.New(breaker.Config{Profile: breaker.Standard(), OnRefused: func(r *colly.Request, err *circuit.OpenError) { refused++ }})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector()
	b.Register(c)
	for i := 1; i <= 60; i++ {
		c.Visit(store.ProductURL(i))
	}
	st := b.Stats()[0]
	fmt.Println("sent:", store.Count(), "refused:", refused)
	fmt.Println("state:", st.State, "successes:", st.Outcomes[circuit.Success.String()], "degraded:", st.Outcomes[circuit.Degraded.String()])
	// Output:
	// sent: 40 refused: 20
	// state: open successes: 30 degraded: 10
}

// Every transition is one structured event when a logger is given.
func ExampleNew_logger() {
	log := zerolog.New(os.Stdout)
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	p := breaker.Standard()
	p.Name, p.ConsecutiveFailures = "two-strikes", 2
	b, _ := breaker.New(breaker.Config{Profile: p, Logger: log, Clock: clk})
	for _, c := range []circuit.Class{circuit.Success, circuit.Degraded, circuit.Degraded} {
		t, _ := b.Allow("shop.example")
		b.Record(t, circuit.Result{Class: c, Latency: 120 * time.Millisecond})
	}
	_, err := b.Allow("shop.example")
	fmt.Println(err)
	// Output:
	// {"level":"warn","event":"breaker_transition","domain":"shop.example","from":"closed","to":"open","reason":"consecutive_failures","failure_rate":0.667,"median_latency_ms":120,"window_n":3,"trips":1,"retry_at":"2026-11-29T12:01:00Z","window":[{"class":"success","ms":120},{"class":"degraded","ms":120},{"class":"degraded","ms":120}],"message":"breaker: shop.example closed → open (consecutive_failures)"}
	// breaker: circuit for shop.example is open; it may be probed again at 2026-11-29T12:01:00Z
}

func ExampleProfile_Validate() {
	p := breaker.Standard()
	p.Name, p.FailureThreshold = "too-strict", 0
	fmt.Println(p.Validate())
	// Output:
	// breaker: profile too-strict: FailureThreshold = 0: must be in (0, 1]: a failure rate, 0.5 trips at half the window failing
}
