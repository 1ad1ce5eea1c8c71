package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// Kind is what a generated store does.
type Kind int

const (
	kHealthy        Kind = iota // healthy at a latency
	kDegrade                    // 503s from request After on
	kDegradeRecover             // the same, healthy again after Recover
	kHangStart                  // never answers, from the first request
	kHangAfter                  // never answers, from request After on
	kThrottle                   // 429 (or 503) with Retry-After from After on, sustained
	kThrottleBurst              // the same for Recover, then healthy
	kRateLimit                  // token bucket, 429 + Retry-After (or 503 without)
	kEmpty                      // 200 consent shells from After on
	kRestyled                   // product pages in a new template from After on
	kTruncated                  // bodies cut from After on
	kBlocked                    // 403 from After on
	kSlope                      // latency climbs, then 503s and hangs
	kindCount
)

var kindNames = [...]string{"healthy", "degrade", "degrade-recover", "hang-start", "hang-after",
	"throttle", "throttle-burst", "ratelimit", "empty", "restyled", "truncated", "blocked", "slope"}

func (k Kind) String() string { return kindNames[k] }

// failing reports whether every request the store answers from its onset
// on is a failure the breaker counts (invariant 5 applies to it).
func (k Kind) failing() bool {
	switch k {
	case kDegrade, kDegradeRecover, kHangStart, kHangAfter, kEmpty, kTruncated:
		return true
	}
	return false
}

// RA says how a store's Retry-After reaches the crawler: as the store
// sends it (seconds), as an HTTP-date, or not at all.
type RA int

const (
	raSeconds RA = iota
	raDate
	raNone
)

func (r RA) String() string { return [...]string{"seconds", "date", "none"}[r] }

// Site is one generated store.
type Site struct {
	Kind       Kind
	Products   int
	PerPage    int
	Latency    time.Duration
	After      int           // healthy requests before the mode starts
	Recover    time.Duration // degrade-recover, throttle-burst
	Status     int           // throttle: 429 or 503; ratelimit: 429 or 503
	RetryAfter time.Duration // throttle
	Rate       float64       // ratelimit
	Burst      int
	Hold       time.Duration // hang
	RA         RA            // how Retry-After reaches the crawler (via a front)
	Extra404   int           // links to missing products added to each listing page (via a front)
}

func drawSite(d draw, w Wiring) Site {
	s := Site{
		Kind:    Kind(d.pick(22, 12, 5, 5, 5, 2, 6, 6, 5, 3, 5, 4, 4)),
		PerPage: []int{3, 5, 10, 20}[d.r.IntN(4)],
		Latency: d.ms(0, 15),
	}
	switch d.pick(60, 30, 8, 2) {
	case 0:
		s.Products = d.intn(3, 25)
	case 1:
		s.Products = d.intn(26, 80)
	case 2:
		s.Products = d.intn(81, 300)
	default:
		s.Products = d.intn(301, 1500)
	}
	s.Hold = 3 * time.Second
	switch s.Kind {
	case kDegrade, kDegradeRecover, kEmpty, kTruncated, kBlocked, kRestyled:
		// From the start, early (a window not yet full), or late.
		switch d.pick(2, 3, 5) {
		case 0:
			s.After = 0
		case 1:
			s.After = d.intn(1, 15)
		default:
			s.After = d.intn(16, 60)
		}
		if s.Kind == kDegradeRecover {
			s.Recover = d.ms(100, 1500)
		}
	case kHangAfter:
		s.After = d.intn(1, 40)
	case kThrottle:
		// Sustained: from the start, on a small store.
		s.Products = d.intn(2, 6)
		s.Status = []int{429, 429, 503}[d.r.IntN(3)]
		s.RetryAfter = time.Second
	case kThrottleBurst:
		s.After = d.intn(0, 30)
		s.Status = []int{429, 429, 503}[d.r.IntN(3)]
		s.RetryAfter = time.Duration(d.intn(1, 2)) * time.Second
		s.Recover = d.ms(200, 1500)
	case kRateLimit:
		s.Status = []int{429, 429, 503}[d.r.IntN(3)]
		s.Rate = float64(d.intn(10, 40))
		s.Burst = d.intn(1, 10)
		s.Products = max(s.Products, d.intn(30, 100))
	case kSlope:
		s.After = d.intn(0, 20)
	}
	if s.Kind == kThrottle || s.Kind == kThrottleBurst || (s.Kind == kRateLimit && s.Status == 429) {
		s.RA = RA(d.pick(6, 3, 1))
	}
	if d.chance(0.12) {
		s.Extra404 = d.intn(s.PerPage, 3*s.PerPage)
	}
	return s
}

// front reports whether the site needs the rewriting front (an HTTP-date
// or no Retry-After, links to missing products).
func (s Site) front() bool { return s.RA != raSeconds || s.Extra404 > 0 }

func (s Site) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(n=%d/%d", s.Kind, s.Products, s.PerPage)
	if s.Latency > 0 {
		fmt.Fprintf(&b, ",lat=%v", s.Latency)
	}
	if s.After > 0 {
		fmt.Fprintf(&b, ",after=%d", s.After)
	}
	if s.Recover > 0 {
		fmt.Fprintf(&b, ",recover=%v", s.Recover)
	}
	if s.Status > 0 {
		fmt.Fprintf(&b, ",status=%d", s.Status)
	}
	if s.RetryAfter > 0 {
		fmt.Fprintf(&b, ",retry=%v", s.RetryAfter)
	}
	if s.Rate > 0 {
		fmt.Fprintf(&b, ",rate=%g,burst=%d", s.Rate, s.Burst)
	}
	if s.RA != raSeconds {
		fmt.Fprintf(&b, ",ra=%s", s.RA)
	}
	if s.Extra404 > 0 {
		fmt.Fprintf(&b, ",404s=%d", s.Extra404)
	}
	b.WriteString(")")
	return b.String()
}

// scenario is the testserver scenario of the site.
func (s Site) scenario() testserver.Scenario {
	sc := testserver.Scenario{Latency: s.Latency, After: s.After, Hold: s.Hold}
	switch s.Kind {
	case kHealthy:
		sc.Mode = testserver.Healthy
	case kDegrade:
		sc.Mode = testserver.Degrade
	case kDegradeRecover:
		sc.Mode, sc.RecoverAfter = testserver.Degrade, s.Recover
	case kHangStart:
		sc.Mode, sc.After = testserver.Hang, 0
	case kHangAfter:
		sc.Mode = testserver.Hang
	case kThrottle:
		sc.Mode, sc.Status, sc.RetryAfter = testserver.Throttle, s.Status, s.RetryAfter
	case kThrottleBurst:
		sc.Mode, sc.Status, sc.RetryAfter, sc.RecoverAfter = testserver.Throttle, s.Status, s.RetryAfter, s.Recover
	case kRateLimit:
		sc.Mode, sc.Status, sc.Rate, sc.Burst = testserver.RateLimit, s.Status, s.Rate, s.Burst
	case kEmpty:
		sc.Mode = testserver.Empty
	case kRestyled:
		sc.Mode = testserver.Restyled
	case kTruncated:
		sc.Mode = testserver.Truncated
	case kBlocked:
		sc.Mode = testserver.Blocked
	case kSlope:
		sc.Mode, sc.Step, sc.FailAfter = testserver.Slope, 3*time.Millisecond, 15
	}
	return sc
}

// site is a started store, maybe behind its front.
type site struct {
	Site
	store *testserver.Store
	url   string // what the crawler is given: the front's URL if any
	host  string
	front *http.Server
}

func startSite(s Site) (*site, error) {
	st, err := testserver.Start(testserver.Config{Products: s.Products, PerPage: s.PerPage, Scenario: s.scenario()})
	if err != nil {
		return nil, fmt.Errorf("start store %s: %w", s, err)
	}
	ss := &site{Site: s, store: st, url: st.URL()}
	if s.front() {
		if err := ss.startFront(); err != nil {
			st.Close()
			return nil, err
		}
	}
	ss.host = strings.TrimPrefix(ss.url, "http://")
	return ss, nil
}

// startFront puts a reverse proxy on its own loopback port before the
// store: it rewrites Retry-After to an HTTP-date or drops it, and adds
// links to missing products to every listing page. The store still logs
// every request: the front holds no state of its own.
func (ss *site) startFront() error {
	target, _ := url.Parse(ss.store.URL())
	rp := httputil.NewSingleHostReverseProxy(target)
	// A fresh connection for every request: net/http re-sends a GET whose
	// reused connection ends without an answer, and the store would log
	// the front's re-send as a second request of the crawler's.
	rp.Transport = &http.Transport{DisableKeepAlives: true, DisableCompression: true}
	// Pass every byte on at once: a cut body makes the proxy hang up, and
	// headers still in its buffer would never reach the crawler, whose
	// transport then re-sends the GET as if the connection had died idle.
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		// The store hung up (a hang ending, a cut body): hang up too.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, herr := hj.Hijack(); herr == nil {
				conn.Close()
				return
			}
		}
		w.WriteHeader(http.StatusBadGateway)
	}
	s := ss.Site
	rp.ModifyResponse = func(resp *http.Response) error {
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			switch s.RA {
			case raNone:
				resp.Header.Del("Retry-After")
			case raDate:
				n, _ := strconv.Atoi(ra)
				at := time.Now().Add(time.Duration(n)*time.Second + time.Second).Truncate(time.Second)
				resp.Header.Set("Retry-After", at.UTC().Format(http.TimeFormat))
			}
		}
		if s.Extra404 > 0 && resp.StatusCode == 200 && isListing(resp.Request.URL.Path) {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				// The store cut the page: cut it too, after its headers
				// and the bytes that came. Failing here instead would
				// hang up before any answer, and the crawler's transport
				// would re-send the GET beneath the user's transport.
				resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
				return nil
			}
			var extra strings.Builder
			for j := 1; j <= s.Extra404; j++ {
				fmt.Fprintf(&extra, "<li><a class=\"product-link\" href=\"%s\">Gone %d</a></li>\n",
					testserver.ProductPath(s.Products+j+1000*pageOf(resp.Request.URL.Path)), j)
			}
			body = bytes.Replace(body, []byte("</ul>"), []byte(extra.String()+"</ul>"), 1)
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("front for %s: %w", ss.store.URL(), err)
	}
	ss.front = &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go ss.front.Serve(ln) //nolint:errcheck // ErrServerClosed at close
	ss.url = "http://" + ln.Addr().String()
	return nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func isListing(path string) bool { return path == "/" || strings.HasPrefix(path, "/list/") }

func pageOf(path string) int {
	if path == "/" {
		return 1
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(path, "/list/"))
	return n
}

func (ss *site) close() {
	if ss.front != nil {
		ss.front.Close()
	}
	ss.store.Close()
}

// redirector is a host of its own, on 127.0.0.1, whose every answer is a
// 302 to a store, as a tracking link's host is: /<i>/<path> answers with
// store i's <path> (the URL the crawler is given for it, its front's if it
// has one). It counts nothing the invariants read: the stores' own logs
// judge the crawl.
type redirector struct {
	srv   *http.Server
	url   string
	index map[string]int // a store's URL (scheme and host) → i
}

func startRedirector(sites []*site) (*redirector, error) {
	rd := &redirector{index: map[string]int{}}
	targets := make([]string, len(sites))
	for i, s := range sites {
		targets[i] = s.url
		rd.index[s.url] = i
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("redirector: %w", err)
	}
	rd.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			i, err := strconv.Atoi(n)
			if err != nil || i < 0 || i >= len(targets) {
				http.NotFound(w, r)
				return
			}
			http.Redirect(w, r, targets[i]+"/"+rest, http.StatusFound)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go rd.srv.Serve(ln) //nolint:errcheck // ErrServerClosed at close
	rd.url = "http://" + ln.Addr().String()
	return rd, nil
}

// link is the redirecting host's URL for a store's URL u (u itself when u
// is on no store of the case).
func (rd *redirector) link(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	i, ok := rd.index[pu.Scheme+"://"+pu.Host]
	if !ok {
		return u
	}
	return fmt.Sprintf("%s/%d%s", rd.url, i, pu.RequestURI())
}

func (rd *redirector) close() {
	if rd != nil {
		rd.srv.Close()
	}
}
