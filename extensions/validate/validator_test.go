package validate_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/breakwater-crawl/breakwater/extensions/validate"
)

const (
	titleSel = "div.product h1.title"
	priceSel = "div.product span.price"
)

func TestNewRejectsBadConfigQuotingIt(t *testing.T) {
	nop := func(*colly.HTMLElement) error { return nil }
	cases := []struct {
		name string
		cfg  validate.Config
		want string
	}{
		{"negative floor", validate.Config{Checks: []validate.Check{validate.MinBytes(-5)}}, "MinBytes(-5)"},
		{"floor twice", validate.Config{Checks: []validate.Check{validate.MinBytes(10), validate.MinBytes(20)}}, "MinBytes(10)"},
		{"invalid selector", validate.Config{Checks: []validate.Check{validate.Require("div.product h1[")}}, `"div.product h1["`},
		{"empty selector", validate.Config{Checks: []validate.Check{validate.Require("")}}, `Require("")`},
		{"no selector", validate.Config{Checks: []validate.Check{validate.Require()}}, "Require()"},
		{"invalid element selector", validate.Config{Checks: []validate.Check{validate.Element("span..price", nop)}}, `"span..price"`},
		{"nil element checker", validate.Config{Checks: []validate.Check{validate.Element("span.price", nil)}}, "nil"},
		{"nil body checker", validate.Config{Checks: []validate.Check{validate.Body("json", nil)}}, "nil"},
		{"unnamed body check", validate.Config{Checks: []validate.Check{validate.Body("", func(*colly.Response) error { return nil })}}, "name"},
		{"invalid page pattern", validate.Config{
			Pages: []validate.Page{
				{Pattern: `/products/(`, Checks: []validate.Check{validate.Require("h1")}},
			},
		}, "/products/("},
		{"invalid selector in page", validate.Config{
			Pages: []validate.Page{
				{Pattern: `/products/`, Checks: []validate.Check{validate.Require("h1!")}},
			},
		}, `"h1!"`},
		{"negative floor in page", validate.Config{Pages: []validate.Page{{Pattern: `/list/`, Checks: []validate.Check{validate.MinBytes(-1)}}}}, "MinBytes(-1)"},
		{"nil check in page", validate.Config{Pages: []validate.Page{{Pattern: `/list/`, Checks: []validate.Check{nil}}}}, "nil"},
		{"negative window", validate.Config{BrokenAfter: -1}, "BrokenAfter -1"},
		{"nil check", validate.Config{Checks: []validate.Check{nil}}, "nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := validate.New(tc.cfg)
			if err == nil {
				t.Fatalf("New accepted it: %v", v)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not quote %q", err, tc.want)
			}
		})
	}
}

// TestVerdictScoresThreeChecks runs each kind of response through a real
// collector and checks the verdict and its named reasons.
func TestVerdictScoresThreeChecks(t *testing.T) {
	s := newSite().
		set("/good", reply{body: product(1, 38000)}).
		set("/consent", reply{body: consent()}).
		set("/restyled", reply{body: restyled(2, 38000)}).
		set("/json", reply{ctype: "application/json", body: []byte(`{"items":[1,2,3]}`)}).
		set("/binary", reply{ctype: "application/octet-stream", body: bytesOf(0xff, 4096)}).
		set("/sniffed", reply{ctype: "-", body: product(3, 38000)}).
		set("/empty", reply{}).
		set("/unavailable", reply{status: http.StatusServiceUnavailable, body: product(4, 38000)})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.MinBytes(1024), validate.Require(titleSel)}})
	// ParseHTTPErrorResponse lets the 503 reach OnScraped, so it is scored.
	c := collector(s, v, colly.ParseHTTPErrorResponse())
	vs := collect(t, c, v)
	cases := []struct {
		path string
		want []string
	}{
		{"/good", nil},
		{"/sniffed", nil},
		{"/consent", []string{"below floor: " + itoa(len(consent())) + " < 1024 bytes", `missing selector "div.product h1.title"`}},
		{"/restyled", []string{`missing selector "div.product h1.title"`}},
		{"/json", []string{"below floor: 17 < 1024 bytes", `missing selector "div.product h1.title"`}},
		{"/binary", []string{`missing selector "div.product h1.title"`}},
		{"/empty", []string{"below floor: 0 < 1024 bytes", `missing selector "div.product h1.title"`}},
		{"/unavailable", []string{"status 503"}},
	}
	for _, tc := range cases {
		if err := c.Visit("http://shop.test" + tc.path); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		got, ok := vs.get(tc.path)
		if !ok {
			t.Fatalf("%s: not scored", tc.path)
		}
		if !reflect.DeepEqual(texts(got), tc.want) {
			t.Errorf("%s: reasons %q, want %q", tc.path, texts(got), tc.want)
		}
		if got.Valid() != (tc.want == nil) {
			t.Errorf("%s: Valid() = %v", tc.path, got.Valid())
		}
		if got.Domain != "shop.test" || got.URL != "http://shop.test"+tc.path {
			t.Errorf("%s: domain %q url %q", tc.path, got.Domain, got.URL)
		}
	}
	if len(consent()) >= 1024 || len(consent()) < 800 {
		t.Fatalf("consent shell is %d bytes, want about 900", len(consent()))
	}
}

func TestReasonKindsNameTheCheck(t *testing.T) {
	s := newSite().set("/consent", reply{body: consent()})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v)
	vs := collect(t, c, v)
	if err := c.Visit("http://shop.test/consent"); err != nil {
		t.Fatal(err)
	}
	got, _ := vs.get("/consent")
	want := []validate.Reason{
		{Kind: validate.KindSize, Text: "below floor: " + itoa(len(consent())) + " < 1024 bytes"},
		{Kind: validate.KindStructure, Subject: titleSel, Text: `missing selector "div.product h1.title"`},
	}
	if !reflect.DeepEqual(got.Reasons, want) {
		t.Fatalf("reasons %+v, want %+v", got.Reasons, want)
	}
	if validate.KindSize.String() != "size" || validate.KindStatus.String() != "status" || validate.KindStructure.String() != "structure" {
		t.Fatal("Kind names changed")
	}
}

func TestCheckReturnsTypedErrorListingReasons(t *testing.T) {
	s := newSite().set("/consent", reply{body: consent()}).set("/good", reply{body: product(1, 5000)})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v)
	errs := map[string]error{}
	c.OnScraped(func(r *colly.Response) { errs[r.Request.URL.Path] = v.Check(r) })
	for _, p := range []string{"/consent", "/good"} {
		if err := c.Visit("http://shop.test" + p); err != nil {
			t.Fatal(err)
		}
	}
	if err := errs["/good"]; err != nil {
		t.Fatalf("good page: %v", err)
	}
	err := errs["/consent"]
	var ie *validate.InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("%T %v is not an *InvalidError", err, err)
	}
	if !errors.Is(err, validate.ErrInvalid) {
		t.Fatal("errors.Is(err, ErrInvalid) is false")
	}
	want := "invalid page: below floor: " + itoa(len(consent())) + ` < 1024 bytes; missing selector "div.product h1.title"`
	if err.Error() != want {
		t.Fatalf("error text %q, want %q", err, want)
	}
	if ie.URL != "http://shop.test/consent" || ie.Domain != "shop.test" || len(ie.Reasons) != 2 {
		t.Fatalf("error fields %+v", ie)
	}
}

func TestTruncatedByMaxBodySizeIsInvalid(t *testing.T) {
	s := newSite().set("/big", reply{body: product(1, 38000)}).set("/exact", reply{body: product(2, 3000)})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v)
	c.MaxBodySize = 20000
	vs := collect(t, c, v)
	if err := c.Visit("http://shop.test/big"); err != nil {
		t.Fatal(err)
	}
	got, _ := vs.get("/big")
	if got.Bytes != 20000 || !reflect.DeepEqual(texts(got), []string{"truncated: body stopped at Colly's MaxBodySize (20000 bytes)"}) {
		t.Fatalf("bytes %d reasons %q", got.Bytes, texts(got))
	}
	// A body exactly MaxBodySize long whose Content-Length says so is whole.
	c.MaxBodySize = len(product(2, 3000))
	if err := c.Visit("http://shop.test/exact"); err != nil {
		t.Fatal(err)
	}
	if got, _ := vs.get("/exact"); !got.Valid() {
		t.Fatalf("complete body of exactly MaxBodySize: %q", texts(got))
	}
}

func TestPageRulesFirstMatchWinsAndFallbackScoresTheRest(t *testing.T) {
	s := newSite().
		set("/products/sku-1", reply{body: product(1, 6000)}).
		set("/products/sku-2", reply{body: listing(6000, 1, 2)}).
		set("/products/featured", reply{body: listing(6000, 1, 2)}).
		set("/list/1", reply{body: listing(6000, 1, 2)}).
		set("/list/2", reply{body: product(1, 6000)}).
		set("/about", reply{body: page(6000, "<p>about us</p>")}).
		set("/tiny", reply{body: []byte("<p>ok</p>")})
	v := mustNew(t, validate.Config{
		Checks: []validate.Check{validate.MinBytes(5000)},
		Pages: []validate.Page{
			{Pattern: `/products/featured$`, Checks: []validate.Check{validate.Require("a.product-link")}},
			{Pattern: `/products/`, Checks: []validate.Check{validate.Require(titleSel, priceSel)}},
			{Pattern: `/list/`, Checks: []validate.Check{validate.MinBytes(2000), validate.Require("a.product-link")}},
		},
	})
	c := collector(s, v)
	vs := collect(t, c, v)
	cases := []struct {
		path, rule string
		want       []string
	}{
		{"/products/sku-1", "/products/", nil},
		{"/products/sku-2", "/products/", []string{`missing selector "div.product h1.title"`, `missing selector "div.product span.price"`}},
		{"/products/featured", "/products/featured$", nil},
		{"/list/1", "/list/", nil},
		{"/list/2", "/list/", []string{`missing selector "a.product-link"`}},
		{"/about", "", nil},
		{"/tiny", "", []string{"below floor: 9 < 5000 bytes"}},
	}
	for _, tc := range cases {
		if err := c.Visit("http://shop.test" + tc.path); err != nil {
			t.Fatal(err)
		}
		got, _ := vs.get(tc.path)
		if got.Rule != tc.rule || !reflect.DeepEqual(texts(got), tc.want) {
			t.Errorf("%s: rule %q reasons %q, want rule %q reasons %q", tc.path, got.Rule, texts(got), tc.rule, tc.want)
		}
	}
}

func TestUnmatchedPagesWithoutTopLevelChecksGetStatusAndDefaultFloor(t *testing.T) {
	s := newSite().set("/about", reply{body: []byte("<p>hi</p>")}).set("/big", reply{body: page(2000, "")})
	v := mustNew(t, validate.Config{
		Pages: []validate.Page{
			{Pattern: `/products/`, Checks: []validate.Check{validate.Require(titleSel)}},
		},
	})
	c := collector(s, v)
	vs := collect(t, c, v)
	for _, p := range []string{"/about", "/big"} {
		if err := c.Visit("http://shop.test" + p); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := vs.get("/about"); !reflect.DeepEqual(texts(got), []string{"below floor: 9 < 1024 bytes"}) {
		t.Fatalf("/about: %q", texts(got))
	}
	if got, _ := vs.get("/big"); !got.Valid() {
		t.Fatalf("/big: %q", texts(got))
	}
}

func TestElementCheckRidesOnCollyParse(t *testing.T) {
	s := newSite().
		set("/p/1", reply{body: product(1, 3000)}).
		set("/p/2", reply{body: []byte(strings.Replace(string(product(2, 3000)), "$12.99", "call us", 1))}).
		set("/p/3", reply{body: restyled(3, 3000)})
	var calls int
	price := func(e *colly.HTMLElement) error {
		calls++
		_, err := parsePrice(e.Text)
		return err
	}
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel), validate.Element(priceSel, price)}})
	c := collector(s, v)
	vs := collect(t, c, v)
	for _, p := range []string{"/p/1", "/p/2", "/p/3"} {
		if err := c.Visit("http://shop.test" + p); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := vs.get("/p/1"); !got.Valid() {
		t.Errorf("/p/1: %q", texts(got))
	}
	if got, _ := vs.get("/p/2"); !reflect.DeepEqual(texts(got), []string{`div.product span.price: price "call us" is not a number`}) {
		t.Errorf("/p/2: %q", texts(got))
	}
	if got, _ := vs.get("/p/3"); !reflect.DeepEqual(texts(got), []string{`missing selector "div.product h1.title"`, `missing selector "div.product span.price"`}) {
		t.Errorf("/p/3: %q", texts(got))
	}
	if calls != 2 {
		t.Errorf("element check ran %d times, want 2 (one price element on each of two pages)", calls)
	}
}

func TestBodyCheckScoresJSON(t *testing.T) {
	s := newSite().
		set("/api/ok", reply{ctype: "application/json", body: []byte(`{"items":[{"sku":1}]}`)}).
		set("/api/empty", reply{ctype: "application/json", body: []byte(`{"error":"try later"}`)}).
		set("/api/html", reply{body: consent()})
	v := mustNew(t, validate.Config{
		Pages: []validate.Page{
			{Pattern: `/api/`, Checks: []validate.Check{validate.MinBytes(2), validate.Body("json items", hasItems)}},
		},
	})
	c := collector(s, v)
	vs := collect(t, c, v)
	for _, p := range []string{"/api/ok", "/api/empty", "/api/html"} {
		if err := c.Visit("http://shop.test" + p); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := vs.get("/api/ok"); !got.Valid() {
		t.Errorf("/api/ok: %q", texts(got))
	}
	if got, _ := vs.get("/api/empty"); !reflect.DeepEqual(texts(got), []string{`json items: no field "items"`}) {
		t.Errorf("/api/empty: %q", texts(got))
	}
	got, _ := vs.get("/api/html")
	if len(got.Reasons) != 1 || !strings.HasPrefix(got.Reasons[0].Text, "json items: ") || got.Reasons[0].Kind != validate.KindStructure {
		t.Errorf("/api/html: %+v", got.Reasons)
	}
}

func hasItems(r *colly.Response) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		return err
	}
	if _, ok := doc["items"]; !ok {
		return errors.New(`no field "items"`)
	}
	return nil
}

// TestVerdictCompleteInOnHTMLRegisteredAfter: a user's OnHTML registered
// after the validator sees the final structure check.
func TestVerdictCompleteInOnHTMLRegisteredAfter(t *testing.T) {
	s := newSite().set("/p/1", reply{body: product(1, 3000)}).set("/p/2", reply{body: restyled(2, 3000)})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v)
	seen := map[string]bool{}
	c.OnHTML("body", func(e *colly.HTMLElement) {
		verdict, ok := v.VerdictOf(e.Response)
		if !ok {
			t.Errorf("%s: no verdict in OnHTML", e.Request.URL)
		}
		seen[e.Request.URL.Path] = verdict.Valid()
	})
	for _, p := range []string{"/p/1", "/p/2"} {
		if err := c.Visit("http://shop.test" + p); err != nil {
			t.Fatal(err)
		}
	}
	if !seen["/p/1"] || seen["/p/2"] {
		t.Fatalf("validity seen in OnHTML: %v", seen)
	}
}

// TestNon2xxOnErrorIsNotScoredButCheckSaysWhy: without
// ParseHTTPErrorResponse a 503 never reaches OnScraped; a breaker asking
// Check still gets a status reason.
func TestNon2xxOnErrorIsNotScoredButCheckSaysWhy(t *testing.T) {
	s := newSite().set("/down", reply{status: 503, body: []byte("upstream")})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, v)
	var seen bool
	var err error
	c.OnError(func(r *colly.Response, _ error) { _, seen = v.VerdictOf(r); err = v.Check(r) })
	_ = c.Visit("http://shop.test/down")
	if seen {
		t.Fatal("a 503 in OnError has a verdict before Check")
	}
	if err == nil || err.Error() != "invalid page: status 503; below floor: 8 < 1024 bytes" {
		t.Fatalf("Check: %v", err)
	}
}

// TestStatus206RoutedToOnErrorIsScoredWithOneParse: Colly v2.3.0 sends
// 203-299 to OnError without parsing; the validator scores it there.
func TestStatus206RoutedToOnErrorIsScoredWithOneParse(t *testing.T) {
	s := newSite().
		set("/partial", reply{status: 206, body: product(1, 3000)}).
		set("/partial-shell", reply{status: 206, body: consent()}).
		set("/nocontent", reply{status: 204})
	var price int
	v := mustNew(t, validate.Config{
		Checks: []validate.Check{validate.Require(titleSel), validate.Element(priceSel, func(e *colly.HTMLElement) error {
			price++
			_, err := parsePrice(e.Text)
			return err
		})},
	})
	c := collector(s, v)
	got := map[string][]string{}
	checked := map[string]error{}
	c.OnError(func(r *colly.Response, _ error) {
		verdict, ok := v.VerdictOf(r)
		if !ok {
			t.Errorf("%s: no verdict in OnError", r.Request.URL)
		}
		got[r.Request.URL.Path] = texts(verdict)
		checked[r.Request.URL.Path] = v.Check(r)
	})
	for _, p := range []string{"/partial", "/partial-shell", "/nocontent"} {
		_ = c.Visit("http://shop.test" + p)
	}
	if got["/partial"] != nil || checked["/partial"] != nil {
		t.Errorf("/partial: %q %v", got["/partial"], checked["/partial"])
	}
	if want := []string{"below floor: " + itoa(len(consent())) + " < 1024 bytes", `missing selector "div.product h1.title"`, `missing selector "div.product span.price"`}; !reflect.DeepEqual(got["/partial-shell"], want) {
		t.Errorf("/partial-shell: %q", got["/partial-shell"])
	}
	if want := []string{"below floor: 0 < 1024 bytes", `missing selector "div.product h1.title"`, `missing selector "div.product span.price"`}; !reflect.DeepEqual(got["/nocontent"], want) {
		t.Errorf("/nocontent: %q", got["/nocontent"])
	}
	if price != 1 {
		t.Errorf("price check ran %d times, want 1", price)
	}
}

// TestCheckWithoutRegisterParsesThePageItself: a breaker consulting a
// validator that never saw Colly's parse (a clone's page, gated at the
// transport) gets a verdict on the structure all the same: the validator
// parses the body itself.
func TestCheckWithoutRegisterParsesThePageItself(t *testing.T) {
	s := newSite().set("/p/1", reply{body: product(1, 3000)}).set("/p/2", reply{body: restyled(2, 3000)})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := collector(s, nil)
	errs := map[string]error{}
	c.OnScraped(func(r *colly.Response) { errs[r.Request.URL.Path] = v.Check(r) })
	for _, u := range []string{"http://shop.test/p/1", "http://shop.test/p/2"} {
		if e := c.Visit(u); e != nil {
			t.Fatal(e)
		}
	}
	if err := errs["/p/1"]; err != nil {
		t.Errorf("a product page with its title, unregistered: %v", err)
	}
	if err := errs["/p/2"]; err == nil || !strings.Contains(err.Error(), titleSel) {
		t.Errorf("a page missing the title, unregistered: %v, want the missing selector named", err)
	}
	if err := v.Check(nil); err == nil {
		t.Fatal("Check(nil) passed")
	}
}

func TestRegisterIsACollectorOption(t *testing.T) {
	s := newSite().set("/p/1", reply{body: product(1, 3000)})
	v := mustNew(t, validate.Config{Checks: []validate.Check{validate.Require(titleSel)}})
	c := colly.NewCollector(v.Register)
	c.WithTransport(s)
	var valid bool
	c.OnScraped(func(r *colly.Response) { verdict, _ := v.VerdictOf(r); valid = verdict.Valid() })
	if err := c.Visit("http://shop.test/p/1"); err != nil {
		t.Fatal(err)
	}
	if !valid {
		t.Fatal("page not valid")
	}
}

// TestManySelectorsShareOneWalk: all selectors ride on one OnHTML, yet each
// element check sees its elements indexed among its own selector's
// matches, and each rule only the selectors it names.
func TestManySelectorsShareOneWalk(t *testing.T) {
	body := []byte(`<html><body><div class="product"><h1 class="title">T</h1><span class="price">$1</span></div>
<ul><li class="r">a</li><li class="r">b</li><li class="r">c</li></ul><p class="x">x</p>` + strings.Repeat(" ", 1100) + `</body></html>`)
	s := newSite().set("/p/1", reply{body: body}).set("/list/1", reply{body: body})
	var indices []int
	v := mustNew(t, validate.Config{
		Checks: []validate.Check{validate.Require(titleSel, "div.product, ul"), validate.Element("li.r", func(e *colly.HTMLElement) error {
			indices = append(indices, e.Index)
			if e.Text == "c" {
				return errors.New("c is not allowed")
			}
			return nil
		})},
		Pages: []validate.Page{
			{Pattern: `/list/`, Checks: []validate.Check{validate.Require("p.x", "p.missing")}},
		},
	})
	c := collector(s, v)
	vs := collect(t, c, v)
	for _, p := range []string{"/p/1", "/list/1"} {
		if err := c.Visit("http://shop.test" + p); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := vs.get("/p/1"); !reflect.DeepEqual(texts(got), []string{"li.r: c is not allowed"}) {
		t.Errorf("/p/1: %q", texts(got))
	}
	if !reflect.DeepEqual(indices, []int{0, 1, 2}) {
		t.Errorf("element indices %v, want [0 1 2]", indices)
	}
	if got, _ := vs.get("/list/1"); !reflect.DeepEqual(texts(got), []string{`missing selector "p.missing"`}) {
		t.Errorf("/list/1: %q", texts(got))
	}
}
