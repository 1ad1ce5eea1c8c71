package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/gocolly/colly/v2"
	"github.com/rs/zerolog"
	"github.com/temoto/robotstxt"
)

// robotsPolicy is --obey-robots: each host's robots.txt, fetched once per
// run the first time a URL of the host is to be crawled, decides which of
// its URLs are crawled, as Nutch and Heritrix do per host:
//
//   - a URL robots.txt disallows is never sent, never queued, and counted
//     in the report's robots column: not a failure of the site, not
//     unfinished work;
//   - a Crawl-delay is the domain's least gap between two requests
//     (breaker.SetMinGap), capped at -max-crawl-delay (Nutch's
//     fetcher.max.crawl.delay, 30 s);
//   - a robots.txt that answers 5xx is not "disallow all" for the whole run
//     (Colly's own robots handling caches it so: one transient 503 and every
//     URL of the host is refused as forbidden): the domain is held open
//     like a tripped circuit for the profile's cooldown (breaker.HoldOpen),
//     its URLs refused and kept for a later run, and robots.txt is fetched
//     again once the cooldown has passed;
//   - a 4xx (no robots.txt) allows everything, as RFC 9309 says; so does a
//     robots.txt that cannot be fetched at all (refused, timed out): the
//     host's own requests then fail, and are counted, as they would without
//     --obey-robots.
//
// It is Colly's robots parser (temoto/robotstxt), matched against the
// collector's User-Agent. URLs are checked before they are queued and
// again when they are sent (URLs resumed from a checkpoint, or queued while
// robots.txt was unavailable): one disallowed then is answered, without
// touching the network, by a stand-in response that is dropped at its
// headers, which the breaker and the checkpoint count as the crawler's
// own choice, and so settled.
type robotsPolicy struct {
	log      zerolog.Logger
	client   *http.Client
	agent    func() string
	b        *breaker.Breaker
	cooldown time.Duration
	maxDelay time.Duration

	mu      sync.Mutex
	hosts   map[string]*robotsHost
	refused map[string]int64 // URLs disallowed, by domain
}

type robotsHost struct {
	busy    chan struct{}         // closed when the fetch in progress ends; nil when none is
	data    *robotstxt.RobotsData // nil while unavailable
	status  int                   // the last answer's status, 0 when none came
	retryAt time.Time             // unavailable: fetched again from then on
}

// robotsRefusedHeader marks a request robots.txt disallowed when it was
// about to leave: the transport answers it without the network and
// OnResponseHeaders drops it.
const robotsRefusedHeader = "X-Productcrawl-Robots-Disallowed"

func newRobotsPolicy(log zerolog.Logger, timeout time.Duration, agent func() string, b *breaker.Breaker, cooldown, maxDelay time.Duration) *robotsPolicy {
	return &robotsPolicy{log: log, client: &http.Client{Timeout: timeout}, agent: agent, b: b, cooldown: cooldown, maxDelay: maxDelay,
		hosts: map[string]*robotsHost{}, refused: map[string]int64{}}
}

// allowed reports whether u may be crawled, fetching its host's
// robots.txt first if the run has not (or must again). A disallowed URL is
// counted.
func (p *robotsPolicy) allowed(u *url.URL) bool {
	key := strings.ToLower(u.Host)
	for {
		p.mu.Lock()
		h := p.hosts[key]
		if h == nil {
			h = &robotsHost{}
			p.hosts[key] = h
		}
		if h.busy != nil {
			busy := h.busy
			p.mu.Unlock()
			<-busy
			continue
		}
		if h.data == nil && !time.Now().Before(h.retryAt) {
			if p.b.State(key) == circuit.Open {
				// Tripped (or restored open): its URLs are refused and kept
				// anyway; robots.txt waits for the first probe, so that not
				// even it is sent into a failing site.
				p.mu.Unlock()
				return true
			}
			busy := make(chan struct{})
			h.busy = busy
			p.mu.Unlock()
			data, status, retryAt := p.fetch(u.Scheme, u.Host, key)
			p.mu.Lock()
			h.data, h.status, h.retryAt, h.busy = data, status, retryAt, nil
			p.mu.Unlock()
			close(busy)
			continue
		}
		data := h.data
		p.mu.Unlock()
		if data == nil {
			return true // unavailable: the domain is held open; checked again when the request leaves
		}
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		if u.RawQuery != "" {
			path += "?" + u.RawQuery
		}
		if data.TestAgent(path, p.agent()) {
			return true
		}
		p.mu.Lock()
		p.refused[key]++
		p.mu.Unlock()
		p.log.Debug().Str("event", "robots_disallowed").Str("url", u.String()).Msg("robots.txt disallows this URL: not crawled")
		return false
	}
}

// fetch reads host's robots.txt. It returns the rules (nil when robots.txt
// answered 5xx: the domain is then held open until retryAt), and the
// status of the answer.
func (p *robotsPolicy) fetch(scheme, host, key string) (*robotstxt.RobotsData, int, time.Time) {
	allowAll, _ := robotstxt.FromStatusAndBytes(http.StatusNotFound, nil)
	u := scheme + "://" + host + "/robots.txt"
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return allowAll, 0, time.Time{}
	}
	req.Header.Set("User-Agent", p.agent())
	resp, err := p.client.Do(req)
	if err != nil {
		p.log.Info().Str("event", "robots_unreachable").Str("domain", key).Str("url", u).Err(err).
			Msg("robots.txt cannot be fetched: crawling as if there were none (the host's own requests will say why)")
		return allowAll, 0, time.Time{}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 500<<10)) // RFC 9309: at least 500 KiB are parsed
	if resp.StatusCode >= 500 || (err != nil && resp.StatusCode < 300) {
		until := time.Now().Add(p.cooldown)
		p.log.Warn().Str("event", "robots_unavailable").Str("domain", key).Int("status", resp.StatusCode).AnErr("error", err).
			Time("retry_at", until).Msg("robots.txt unavailable: the domain is paused like an open circuit, robots.txt is fetched again after the cooldown")
		if herr := p.b.HoldOpen(key, until, "robots_unavailable"); herr != nil {
			p.log.Error().Str("event", "robots_hold_failed").Str("domain", key).Err(herr).Msg("cannot pause the domain")
		}
		return nil, resp.StatusCode, until
	}
	data, err := robotstxt.FromStatusAndBytes(resp.StatusCode, body)
	if err != nil {
		p.log.Warn().Str("event", "robots_unreadable").Str("domain", key).Int("status", resp.StatusCode).Err(err).
			Msg("robots.txt cannot be read: crawling as if there were none")
		return allowAll, resp.StatusCode, time.Time{}
	}
	if d := data.FindGroup(p.agent()).CrawlDelay; d > 0 {
		gap := min(d, p.maxDelay)
		if err := p.b.SetMinGap(key, gap); err != nil {
			p.log.Error().Str("event", "crawl_delay_failed").Str("domain", key).Err(err).Msg("cannot set the domain's least gap")
		} else {
			p.log.Info().Str("event", "crawl_delay").Str("domain", key).Dur("crawl_delay", d).Dur("gap", gap).
				Msgf("robots.txt asks for %v between requests: %v is the domain's least gap", d, gap)
		}
	}
	return data, resp.StatusCode, time.Time{}
}

// onRequest checks a request as it is about to be handled: one robots.txt
// disallows now (resumed, or queued while robots.txt was unavailable) is
// marked, so that the transport answers it without the network and
// onResponseHeaders drops it.
func (p *robotsPolicy) onRequest(r *colly.Request) {
	if r.IsAbort() || r.Headers.Get(robotsRefusedHeader) != "" {
		return
	}
	if !p.allowed(r.URL) {
		r.Headers.Set(robotsRefusedHeader, "1")
	}
}

func (p *robotsPolicy) onResponseHeaders(r *colly.Response) {
	if r.Request.Headers.Get(robotsRefusedHeader) != "" {
		r.Request.Abort()
	}
}

// transport answers a marked request with an empty 204 of its own, and
// sends every other one through base.
type robotsTransport struct{ base http.RoundTripper }

func (t robotsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get(robotsRefusedHeader) == "" {
		return t.base.RoundTrip(req)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// counts returns the URLs disallowed per domain, for the report.
func (p *robotsPolicy) counts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int64, len(p.refused))
	for h, n := range p.refused {
		out[h] = n
	}
	return out
}

// Judge names the domains whose robots.txt was still unavailable at the
// end: their URLs wait for a later run (tripped).
func (p *robotsPolicy) Judge() outcome.Evidence {
	p.mu.Lock()
	defer p.mu.Unlock()
	var doms, parts []string
	for name, h := range p.hosts {
		if h.data == nil && h.status >= 500 {
			doms = append(doms, name)
			parts = append(parts, fmt.Sprintf("%s (HTTP %d)", name, h.status))
		}
	}
	if len(doms) == 0 {
		return outcome.Evidence{}
	}
	sort.Strings(doms)
	sort.Strings(parts)
	return outcome.Evidence{Findings: []outcome.Finding{{State: outcome.Tripped, Kind: "robots_unavailable", Domains: slices.Clone(doms),
		Reason: "robots.txt answered a server error for " + strings.Join(parts, ", ") + ": the domain was paused, its URLs wait for a later run, which fetches robots.txt again"}}}
}
