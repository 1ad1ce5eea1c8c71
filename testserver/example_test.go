package testserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// A store that serves two pages, then degrades: the request log says when
// it started failing and how many requests were sent into it.
func Example() {
	s, err := testserver.Start(testserver.Config{
		Products: 50,
		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 2},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	for n := 1; n <= 4; n++ {
		resp, err := http.Get(s.ProductURL(n))
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(testserver.ProductPath(n), resp.StatusCode, len(body) > 30000)
	}
	_, seq := s.FailingSince()
	fmt.Println("first failure: request", seq)
	fmt.Println("sent into the degradation:", s.SentAfterFailing())
	// Output:
	// /products/sku-1 200 true
	// /products/sku-2 200 true
	// /products/sku-3 503 false
	// /products/sku-4 503 false
	// first failure: request 3
	// sent into the degradation: 2
}

func ExampleParseScenario() {
	sc, err := testserver.ParseScenario("degrade:after=30,recover=2m")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sc.Mode, sc.After, sc.RecoverAfter)
	fmt.Println(sc)
	// Output:
	// degrade 30 2m0s
	// degrade:after=30,recover=2m0s
}

func ExampleTitle() {
	page := testserver.ProductPage(7)
	fmt.Println(len(page) > 37*1024, testserver.Title(7) != "", testserver.Price(7)[0] == '$')
	// Output:
	// true true true
}

// A pool of two proxies in front of one store, one of which blocks every
// site: the store's log counts only what the healthy proxy forwarded, and
// each proxy's log says what it did.
func ExampleStartProxies() {
	s, err := testserver.Start(testserver.Config{Products: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	pool, err := testserver.StartProxies([]testserver.ProxyConfig{
		{},
		{Scenario: testserver.ProxyScenario{Mode: testserver.ProxyBlock403}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	for i, p := range pool.Proxies {
		pu, _ := url.Parse(p.URL())
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(s.ProductURL(i + 1))
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Printf("via proxy %d: %d\n", i+1, resp.StatusCode)
	}
	for i, p := range pool.Proxies {
		h := p.Requests()[0]
		fmt.Printf("proxy %d: %s %s, forwarded %v\n", i+1, h.Mode, h.Path, h.Forwarded)
	}
	fmt.Println("the store received", s.Count())
	// Output:
	// via proxy 1: 200
	// via proxy 2: 403
	// proxy 1: healthy /products/sku-1, forwarded true
	// proxy 2: block403 /products/sku-2, forwarded false
	// the store received 1
}
