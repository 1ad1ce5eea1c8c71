// Package testserver is a local web shop that degrades on command: the store
// every Breakwater test and benchmark crawls instead of ad-hoc handlers.
//
// A Store listens on its own port of 127.0.0.1 (so each store is a host of
// its own to a per-domain breaker), serves a deterministic catalogue, and
// answers according to a Scenario that can be set at Start and switched at
// run time. It records every request, so a test can assert how many requests
// a crawler sent into a degradation:
//
//	s, err := testserver.Start(testserver.Config{
//		Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 30},
//	})
//	if err != nil { ... }
//	defer s.Close()
//	// crawl s.URL() ...
//	_, seq := s.FailingSince() // 31: the first 503
//	n := s.SentAfterFailing()  // requests from the first 503 on
//
// # Pages
//
// Everything is generated from the product number, so every run serves
// byte-identical pages:
//
//	/                    listing page 1 (also /list/1)
//	/list/N              listing page N: a ul.products of PerPage a.product-link, and an a.next
//	/products/sku-N      product N (1..Products): about 38 KB of HTML
//	/sitemap.xml         an XML sitemap: a url/loc with the absolute URL of every product
//	anything else        404
//
// The selectors to scrape are exported as constants: TitleSelector
// ("div.product h1.title"), PriceSelector ("div.product span.price"),
// ProductLinkSelector ("a.product-link"), NextSelector ("a.next") and
// RelatedSelector ("a.related", up to four per product page). Title and Price
// return what a page shows under them. The renderers are exported too, so a
// benchmark can use a page without a server: ProductPage, RestyledProductPage,
// ListingPage (or the same methods on a Catalog), ConsentShell, BlockPage,
// NotFoundPage, and Catalog.Sitemap. A store with Products: NoProducts has
// one listing page with an empty ul.products.
//
// # Scenarios
//
// Every scenario starts after Scenario.After healthy answers (0: at once) and,
// if Scenario.RecoverAfter is set, ends that long after its first non-healthy
// answer (time by Config.Now). Every path follows it, listing pages included,
// except where noted. Scenario.Latency is waited before every answer.
//
//	healthy    200 pages
//	degrade    503 (or Status), empty body
//	hang       accepts and never answers; after Hold (30 s) or Close the connection is closed unanswered
//	empty      200 with the ~900-byte ConsentShell for every page
//	throttle   429 (or Status) with Retry-After: RetryAfter in seconds (default 1)
//	blocked    403 (or Status) with BlockPage
//	gone       404 (or Status, e.g. 410)
//	slope      200s whose latency climbs by Step per request, then after FailAfter of them
//	           the cycle 503, 503, hang (the 503s at the latency reached)
//	truncated  declares the full Content-Length, sends Cut bytes (a third), closes: the client
//	           reads io.ErrUnexpectedEOF
//	ratelimit  token bucket (Rate per second, Burst): a page per token; when empty, 429 with
//	           Retry-After until the next token, or Status 503 without Retry-After
//	restyled   product pages in a changed template (full size, no TitleSelector or
//	           PriceSelector); listing pages unchanged so a crawl reaches them
//
// Scenarios have a text form, used by the command's flags and the admin
// endpoint: "degrade:after=30,recover=2m"; see ParseScenario and
// ScenarioKeys.
//
// Decisions by time (recovery, the token bucket) read Config.Now, so a test
// drives them with a fake clock (for example the Now method of the
// project's clocktest.Fake). Real waits (latency, hangs) use real timers, are
// bounded by Scenario.Hold and end at once when the store is closed or the
// client goes away. Give clients a timeout below Hold: when a hang ends and
// its connection closes unanswered, Go's transport retries a GET once if the
// connection was a reused keep-alive one, and the store counts that retry.
//
// # Observing
//
// Each request is a Hit: sequence number, time, path, status (0 for a hang)
// and the Mode that answered (Healthy for a normal page). Requests, Count,
// CountPath, CountMode, FailingSince and SentAfterFailing read the log; Reset
// clears it and restarts the scenario. All are safe for concurrent use.
//
// With Config.Admin set, a store also serves /_admin/ (not counted as hits):
//
//	GET  /_admin/scenario                     the scenario in force, in text form
//	POST /_admin/scenario?mode=M&key=value...  switch scenario
//	POST /_admin/reset                        clear the log, restart the scenario
//	GET  /_admin/stats                        JSON counts
//
// StartFleet starts several stores at once, one per Config; the command
// testserver/cmd/testserver runs a fleet from flags until interrupted.
//
// # Proxies
//
// StartProxy starts a forward HTTP proxy on its own port of 127.0.0.1, for
// crawls through a pool of real local proxies some of which are bad, the
// stores behind them staying healthy. Give Proxy.URL to colly's SetProxy or
// proxy.RoundRobinProxySwitcher (StartProxies starts a pool; its URLs are
// the switcher's list). It forwards plain-HTTP requests in absolute form to
// loopback targets; it does not tunnel CONNECT (https), answering it 501.
// The first ProxyScenario.After requests are forwarded; from then on (and
// again after SetScenario, SetMode or Reset) the ProxyMode decides:
//
//	healthy     forwards the request, hands back the target's answer (502 if the target
//	            cannot be reached; a target that hangs is a 502 when it lets go)
//	refuse      closes its listener: a new connection is refused by the kernel (the client's
//	            dial fails with ECONNREFUSED), an idle kept-alive connection is closed (the
//	            client's next request dials and is refused), a request already on its way on
//	            an open connection is cut with a reset. With After N, it stops listening as
//	            its N-th request arrives (that one is forwarded). Healed, it listens again
//	            on the same port
//	auth407     407 Proxy Authentication Required with a Basic challenge, target never asked
//	badgateway  502 Bad Gateway, target never asked
//	latency     waits Delay (default 500ms), then forwards; the wait ends, unforwarded,
//	            when the client goes away or the proxy closes
//	block403    403 with BlockPage for every target, none asked
//
// With ProxyConfig.User set the proxy also requires those Basic
// credentials (Proxy-Authorization, as a client sends them for
// http://user:password@host:port) and answers 407 without them; it never
// forwards them. Proxy scenarios have a text form, "badgateway:after=30"
// or "latency:delay=200ms" (ParseProxyScenario, ProxyScenarioKeys), and
// with ProxyConfig.Admin a proxy serves admin endpoints of its own
// (ProxyAdminHelp) to requests addressed to it, except while refusing.
//
// Each request a proxy receives is a ProxyHit: target host and path, the
// mode that handled it, the status the client was sent, the latency added,
// whether it was forwarded. Requests, Count, CountMode, CountHost and
// Forwarded read the log; a refused connection is not in it, the proxy
// never saw it. The stores' own logs count what reached them. Close ends
// waits and forwards under way and returns when no request is being
// handled.
package testserver
