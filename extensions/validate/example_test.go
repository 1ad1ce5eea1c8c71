package validate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater/extensions/validate"
)

// exampleShop serves a product page, a consent shell, a product whose
// price reads "call us", and two JSON answers.
func exampleShop() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/products/1":
			w.Write(product(1, 38000))
		case "/products/2":
			w.Write([]byte(strings.Replace(string(product(2, 38000)), "$12.99", "call us", 1)))
		case "/consent":
			w.Write(consent())
		case "/api/items":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"items":[{"sku":1},{"sku":2}]}`))
		case "/api/error":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"error":"try again later"}`))
		default:
			http.NotFound(w, r)
		}
	}))
}

// A product crawl that keeps only valid pages: a 200 holding a consent
// shell is not data.
func Example() {
	shop := exampleShop()
	defer shop.Close()

	v, err := validate.New(validate.Config{Checks: []validate.Check{validate.MinBytes(1024), validate.Require("div.product h1.title")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(v.Register) // or breakwater.Use(c, v, b), validator first
	c.OnScraped(func(r *colly.Response) {
		verdict, _ := v.VerdictOf(r)
		if !verdict.Valid() {
			fmt.Println("skip", r.Request.URL.Path, verdict.Err())
			return
		}
		fmt.Println("store", r.Request.URL.Path)
	})
	c.Visit(shop.URL + "/products/1")
	c.Visit(shop.URL + "/consent")
	// Output:
	// store /products/1
	// skip /consent invalid page: below floor: 938 < 1024 bytes; missing selector "div.product h1.title"
}

// An Element check rides on Colly's parse: the price must parse as a
// number.
func ExampleElement() {
	shop := exampleShop()
	defer shop.Close()

	price := func(e *colly.HTMLElement) error {
		text := strings.TrimSpace(e.Text)
		if _, err := strconv.ParseFloat(strings.TrimPrefix(text, "$"), 64); err != nil {
			return fmt.Errorf("price %q is not a number", text)
		}
		return nil
	}
	v, err := validate.New(validate.Config{Checks: []validate.Check{validate.Require("div.product h1.title"), validate.Element("div.product span.price", price)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(v.Register)
	c.OnScraped(func(r *colly.Response) {
		fmt.Println(r.Request.URL.Path, v.Check(r))
	})
	c.Visit(shop.URL + "/products/1")
	c.Visit(shop.URL + "/products/2")
	// Output:
	// /products/1 <nil>
	// /products/2 invalid page: div.product span.price: price "call us" is not a number
}

// A Body check reads what no selector can: a JSON answer must have a field
// "items". Page scopes it to the API's URLs, with a floor fit for JSON.
func ExampleBody() {
	shop := exampleShop()
	defer shop.Close()

	items := func(r *colly.Response) error {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &doc); err != nil {
			return err
		}
		if _, ok := doc["items"]; !ok {
			return errors.New(`no field "items"`)
		}
		return nil
	}
	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.Require("div.product h1.title")},
		Pages: []validate.Page{
			{Pattern: `/api/`, Checks: []validate.Check{validate.MinBytes(2), validate.Body("json", items)}},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(v.Register)
	c.OnScraped(func(r *colly.Response) {
		fmt.Println(r.Request.URL.Path, v.Check(r))
	})
	c.Visit(shop.URL + "/api/items")
	c.Visit(shop.URL + "/api/error")
	// Output:
	// /api/items <nil>
	// /api/error invalid page: json: no field "items"
}

// Bad configuration is refused at construction, quoting what was wrong.
func ExampleNew_badSelector() {
	_, err := validate.New(validate.Config{Checks: []validate.Check{validate.Require("div.product h1[")}})
	fmt.Println(err != nil, strings.Contains(err.Error(), `"div.product h1["`))
	_, err = validate.New(validate.Config{Checks: []validate.Check{validate.MinBytes(-1)}})
	fmt.Println(err)
	// Output:
	// true true
	// validate: MinBytes(-1): the byte floor must be 0 (off) or more
}

// A broken selector is diagnosed per domain; the run should end as an
// error, not as a tripped breaker.
func ExampleConfig_onBroken() {
	shop := exampleShop()
	defer shop.Close()

	v, err := validate.New(validate.Config{
		Checks: []validate.Check{validate.Require("div.product h1.headline")},
		OnBroken: func(d validate.BrokenDomain) {
			fmt.Println("selector_broken:", d.Selectors, "after", len(d.Pages), "pages")
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := colly.NewCollector(v.Register, colly.AllowURLRevisit())
	for range 3 {
		c.Visit(shop.URL + "/products/1")
	}
	fmt.Println(len(v.Broken()), "domain diagnosed")
	// Output:
	// selector_broken: [div.product h1.headline] after 3 pages
	// 1 domain diagnosed
}
