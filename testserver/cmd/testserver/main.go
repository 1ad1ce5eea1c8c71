// Command testserver runs local test stores that degrade on command: the
// stores of package testserver, one per port on 127.0.0.1, for trying a
// crawler by hand. It prints each store's URL and runs until SIGINT or
// SIGTERM. Run it with -h for the flags, the scenario keys and the admin
// endpoints. With -proxy it also runs forward HTTP proxies to the stores
// that degrade on command, for crawls through a pool of proxies some of
// which are bad.
//
//	go run ./testserver/cmd/testserver -store healthy -store degrade:after=30 -store empty:after=50
//	go run ./testserver/cmd/testserver -stores 3 -proxy healthy -proxy refuse:after=20 -proxy block403
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// Exit codes, as Breakwater's commands use them: 0 ok, 1 error, 64 usage.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 64
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usageHead = `Usage: testserver [flags]

Runs local test web shops that degrade on command, each on its own port (so
each is a host of its own), prints every store's URL and runs until SIGINT or
SIGTERM. Each store serves / and /list/N (listing pages: a.product-link,
a.next) and /products/sku-N (~38 KB product pages: div.product h1.title,
div.product span.price), and answers by its scenario. With -proxy or
-proxies it also runs forward HTTP proxies (plain http, loopback targets
only), each on a port of its own, that degrade on command while the stores
behind them stay healthy.

Flags:
`

const usageTail = `
Scenarios (-store mode or mode:key=value,...):
  healthy    200 pages
  degrade    503 with an empty body
  hang       accept and never answer (closed after hold)
  empty      200 with a ~900-byte consent shell for every page
  throttle   429 with Retry-After
  blocked    403 with a block page
  gone       404 for every page
  slope      latency climbs by step per request, then 503, 503, hang, ...
  truncated  full Content-Length declared, part of the body sent, connection closed
  ratelimit  token bucket: pages while tokens last, then 429 + Retry-After (status=503: without)
  restyled   full-size product pages without div.product h1.title

Scenario keys:
` + testserver.ScenarioKeys + `

Proxy scenarios (-proxy mode or mode:key=value,...):
  healthy     forward, hand back the store's answer
  refuse      stop listening: connections refused (after=N: once N requests have come)
  auth407     407 Proxy Authentication Required
  badgateway  502, the store never asked
  latency     wait delay, then forward
  block403    403 with a block page for every store, none asked

Proxy scenario keys:
` + testserver.ProxyScenarioKeys + `

Admin endpoints on every store (unless -admin=false), not counted as requests:
` + testserver.AdminHelp + `

Admin endpoints on every proxy (unless -admin=false), addressed to the proxy itself:
` + testserver.ProxyAdminHelp + `

Examples:
  testserver -store healthy -store degrade:after=30 -store empty:after=50
  testserver -stores 5 -store slope:step=100ms,failafter=40
  curl -X POST 'http://127.0.0.1:PORT/_admin/scenario?mode=degrade&after=30'
  testserver -stores 3 -proxy healthy -proxy refuse:after=20 -proxy block403 -proxy latency:delay=300ms
  curl -x http://127.0.0.1:PROXYPORT http://127.0.0.1:PORT/products/sku-1

Exit status: 0 after SIGINT/SIGTERM, 64 for bad flags, 1 if a store or proxy cannot start.
`

// run is the command without the process around it, so that tests can run it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHead)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), usageTail)
	}
	var scenarios []testserver.Scenario
	stores := fs.Int("stores", 0, "`N` stores to run (default: one per -store, at least 1); stores without a -store are healthy")
	fs.Func("store", "scenario `SPEC` of the next store, repeatable, e.g. degrade:after=30", func(v string) error {
		sc, err := testserver.ParseScenario(v)
		if err != nil {
			return err
		}
		scenarios = append(scenarios, sc)
		return nil
	})
	products := fs.Int("products", testserver.DefaultProducts, "`N` products per store (0: none; the listing is empty)")
	perPage := fs.Int("per-page", testserver.DefaultPerPage, "products per listing page")
	listen := fs.String("listen", "127.0.0.1:0", "`ADDR` to listen on; port 0: a free port per store; port P: store i gets P+i-1")
	allowRemote := fs.Bool("allow-remote", false, "allow a -listen address that is not loopback")
	admin := fs.Bool("admin", true, "serve the /_admin/ endpoints")
	var proxyScenarios []testserver.ProxyScenario
	proxies := fs.Int("proxies", 0, "`N` proxies to run (default: one per -proxy); proxies without a -proxy are healthy")
	fs.Func("proxy", "proxy scenario `SPEC` of the next proxy, repeatable, e.g. refuse:after=20", func(v string) error {
		sc, err := testserver.ParseProxyScenario(v)
		if err != nil {
			return err
		}
		proxyScenarios = append(proxyScenarios, sc)
		return nil
	})

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage // flag has printed the error and the usage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "testserver: "+format+"\n", a...)
		fmt.Fprintln(stderr, "Run testserver -h for usage.")
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q: scenarios go in -store flags", fs.Arg(0))
	case *stores < 0:
		return usage("-stores %d is negative", *stores)
	case *stores > 0 && *stores < len(scenarios):
		return usage("-stores %d but %d -store flags: give at most one -store per store", *stores, len(scenarios))
	case *products < 0:
		return usage("-products %d is negative (0 means no products)", *products)
	case *perPage < 1:
		return usage("-per-page %d: want at least 1", *perPage)
	case *proxies < 0:
		return usage("-proxies %d is negative", *proxies)
	case *proxies > 0 && *proxies < len(proxyScenarios):
		return usage("-proxies %d but %d -proxy flags: give at most one -proxy per proxy", *proxies, len(proxyScenarios))
	}
	n := max(*stores, len(scenarios), 1)
	addrs, err := storeAddrs(*listen, n)
	if err != nil {
		return usage("%v", err)
	}

	cfgs := make([]testserver.Config, n)
	for i := range cfgs {
		cfgs[i] = testserver.Config{Addr: addrs[i], AllowRemote: *allowRemote, Products: *products,
			PerPage: *perPage, Admin: *admin}
		if *products == 0 {
			cfgs[i].Products = testserver.NoProducts
		}
		if i < len(scenarios) {
			cfgs[i].Scenario = scenarios[i]
		}
	}
	fleet, err := testserver.StartFleet(cfgs)
	if errors.Is(err, testserver.ErrNotLoopback) {
		return usage("%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		return exitError
	}
	for i, s := range fleet.Stores {
		fmt.Fprintf(stdout, "store %d  %s  %s\n", i+1, s.URL(), s.Scenario())
	}
	pcfgs := make([]testserver.ProxyConfig, max(*proxies, len(proxyScenarios)))
	for i := range pcfgs {
		pcfgs[i].Admin = *admin
		if i < len(proxyScenarios) {
			pcfgs[i].Scenario = proxyScenarios[i]
		}
	}
	pool, err := testserver.StartProxies(pcfgs)
	if err != nil {
		_ = fleet.Close()
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		return exitError
	}
	for i, p := range pool.Proxies {
		fmt.Fprintf(stdout, "proxy %d  %s  %s\n", i+1, p.URL(), p.Scenario())
	}
	if *admin {
		fmt.Fprintf(stdout, "switch a store: curl -X POST '%s/_admin/scenario?mode=degrade&after=30'\n", fleet.Stores[0].URL())
		if len(pool.Proxies) > 0 {
			fmt.Fprintf(stdout, "switch a proxy: curl -X POST '%s/_admin/scenario?mode=badgateway'\n", pool.Proxies[0].URL())
		}
	}

	<-ctx.Done()
	if err := errors.Join(pool.Close(), fleet.Close()); err != nil {
		fmt.Fprintf(stderr, "testserver: close: %v\n", err)
		return exitError
	}
	for i, s := range fleet.Stores {
		_, seq := s.FailingSince()
		fmt.Fprintf(stdout, "store %d  %s", i+1, plural(s.Count(), "request"))
		if seq > 0 {
			fmt.Fprintf(stdout, ", first failure at request %d, %d sent from it on", seq, s.SentAfterFailing())
		}
		fmt.Fprintln(stdout)
	}
	for i, p := range pool.Proxies {
		fmt.Fprintf(stdout, "proxy %d  %s, %d forwarded\n", i+1, plural(p.Count(), "request"), p.Forwarded())
	}
	return exitOK
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// storeAddrs gives n listen addresses from listen: all with port 0, or
// consecutive ports from the one given.
func storeAddrs(listen string, n int) ([]string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("-listen %q: want host:port, e.g. 127.0.0.1:0: %w", listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p+n-1 > 65535 {
		return nil, fmt.Errorf("-listen %q: port must be 0 or leave room for %d stores below 65536", listen, n)
	}
	out := make([]string, n)
	for i := range out {
		q := 0
		if p > 0 {
			q = p + i
		}
		out[i] = net.JoinHostPort(host, strconv.Itoa(q))
	}
	return out, nil
}
