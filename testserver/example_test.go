package testserver_test

import (
	"fmt"
	"io"
	"net/http"

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
