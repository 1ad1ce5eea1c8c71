package testserver

import (
	"math"
	"strconv"
	"time"
)

// progress is a scenario under way: how many requests it has answered, when
// it first failed, its token bucket. The Store's mutex guards it.
type progress struct {
	sc       Scenario // with defaults
	served   int
	failed   bool
	failedAt time.Time
	tokens   float64
	refilled time.Time
}

func (r *progress) start(sc Scenario, now time.Time) {
	sc = sc.withDefaults()
	*r = progress{sc: sc, tokens: float64(sc.Burst), refilled: now}
}

// bodyKind is which page an answer carries; pages are rendered outside the
// lock.
type bodyKind int

const (
	bodyNone     bodyKind = iota
	bodyRoute             // the routed page: listing, product or not found
	bodyRestyled          // the routed product page, restyled
	bodyConsent
	bodyBlock
	bodyNotFound
	bodyStatusText
)

// plan is the answer the scenario chose for one request.
type plan struct {
	mode       Mode
	route      route
	status     int
	body       bodyKind
	latency    time.Duration // wait before answering
	hold       time.Duration // Hang: how long to hold
	retryAfter int           // seconds; 0 = no header
	cut        int           // Truncated: body bytes to send (0 = a third)
}

// hitStatus is the status a Hit records.
func (p plan) hitStatus() int {
	if p.mode == Hang {
		return 0
	}
	return p.status
}

// next decides the answer to the next request for route rt at time now.
func (r *progress) next(now time.Time, rt route) plan {
	sc := r.sc
	k := r.served
	r.served++
	p := plan{mode: Healthy, route: rt, status: rt.status, body: bodyRoute, latency: sc.Latency}
	if k < sc.After || r.recovered(now) {
		p.latency = min(p.latency, sc.Hold)
		return p
	}
	j := k - sc.After // index within the mode
	fail := func(m Mode, body bodyKind) {
		p.mode, p.status, p.body = m, sc.Status, body
	}
	switch sc.Mode {
	case Degrade:
		fail(Degrade, bodyNone)
	case Hang:
		p = plan{mode: Hang, route: rt, hold: sc.Hold}
	case Empty:
		p.mode, p.status, p.body = Empty, 200, bodyConsent
	case Throttle:
		fail(Throttle, bodyStatusText)
		p.retryAfter = seconds(sc.RetryAfter)
	case Blocked:
		fail(Blocked, bodyBlock)
	case Gone:
		fail(Gone, bodyNotFound)
	case Slope:
		if j < sc.FailAfter {
			p.latency += time.Duration(j) * sc.Step
			break
		}
		p.latency += time.Duration(sc.FailAfter) * sc.Step
		if (j-sc.FailAfter)%3 == 2 {
			p = plan{mode: Hang, route: rt, hold: sc.Hold}
		} else {
			fail(Slope, bodyNone)
		}
	case Truncated:
		p.mode, p.cut = Truncated, sc.Cut
	case RateLimit:
		if wait, ok := r.take(now); !ok {
			fail(RateLimit, bodyStatusText)
			if sc.Status == 429 {
				p.retryAfter = seconds(wait)
			}
		}
	case Restyled:
		if rt.kind == routeProduct {
			p.mode, p.body = Restyled, bodyRestyled
		}
	}
	if p.mode != Healthy && !r.failed {
		r.failed, r.failedAt = true, now
	}
	p.latency = min(p.latency, sc.Hold)
	return p
}

func (r *progress) recovered(now time.Time) bool {
	return r.failed && r.sc.RecoverAfter > 0 && now.Sub(r.failedAt) >= r.sc.RecoverAfter
}

// take takes a token from the bucket, or says how long until one is there.
func (r *progress) take(now time.Time) (time.Duration, bool) {
	if el := now.Sub(r.refilled); el > 0 {
		r.tokens = math.Min(float64(r.sc.Burst), r.tokens+el.Seconds()*r.sc.Rate)
		r.refilled = now
	}
	if r.tokens >= 1 {
		r.tokens--
		return 0, true
	}
	return time.Duration((1 - r.tokens) / r.sc.Rate * float64(time.Second)), false
}

// seconds rounds d up to whole seconds, at least 1: Retry-After's unit.
func seconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// route is what a path names in the catalogue.
type route struct {
	kind   routeKind
	n      int // listing page or product number
	status int // 200, or 404 for anything the catalogue does not have
}

type routeKind int

const (
	routeUnknown routeKind = iota
	routeListing
	routeProduct
	routeSitemap
)

// route maps a path to a page: "/" and "/list/N" to listings,
// "/products/sku-N" to products, SitemapPath to the sitemap. Numbers must be written canonically
// ("sku-7", not "sku-07"), so that one page has one path.
func (c Catalog) route(path string) route {
	switch {
	case path == "/":
		return route{kind: routeListing, n: 1, status: 200}
	case path == SitemapPath:
		return route{kind: routeSitemap, status: 200}
	case len(path) > len("/list/") && path[:len("/list/")] == "/list/":
		if n, ok := number(path[len("/list/"):]); ok && n <= c.ListingPages() {
			return route{kind: routeListing, n: n, status: 200}
		}
	case len(path) > len("/products/sku-") && path[:len("/products/sku-")] == "/products/sku-":
		if n, ok := number(path[len("/products/sku-"):]); ok && n <= c.Len() {
			return route{kind: routeProduct, n: n, status: 200}
		}
	}
	return route{kind: routeUnknown, status: 404}
}

// number parses a canonical positive decimal.
func number(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}
