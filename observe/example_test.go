package observe_test

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// counter is an extension that follows the breaker: it counts the
// attempts by class.
type counter struct{ byClass map[string]int }

func (c *counter) Register(*colly.Collector) {}

func (c *counter) Observe(s observe.Subject) error {
	return s.Hook(observe.Hooks{OnAttempt: func(a observe.Attempt) { c.byClass[a.Result.Class.String()]++ }})
}

// An extension that follows the breaker is an Observer: Use ties it to
// the crawl's breaker.
func Example() {
	store, _ := testserver.Start(testserver.Config{Products: 5})
	defer store.Close()
	b, _ := breaker.New(breaker.Config{Profile: breaker.Standard()})
	count := &counter{byClass: map[string]int{}}
	c := colly.NewCollector()
	if err := breakwater.Use(c, b, count); err != nil {
		fmt.Println(err)
		return
	}
	for i := 1; i <= 5; i++ {
		c.Visit(store.ProductURL(i))
	}
	fmt.Println(count.byClass)
	// Output:
	// map[success:5]
}
