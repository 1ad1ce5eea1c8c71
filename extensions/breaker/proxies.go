package breaker

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
	"github.com/gocolly/colly/v2"
)

// viaProxies sends req through Config.Proxies' rotation. Each attempt is
// charged to its proxy; one the proxy explains (unreachable, refusing the
// credentials, refused by this site alone) is sent again through the next
// proxy, at most once per proxy of the pool, and the site is charged with
// nothing but what it answered. A failure the site may have caused as
// well as the proxy (a bare 5xx, a timeout) is left to the next proxy to
// tell; when no later proxy tells, the latest such failure is the site's
// outcome. When no proxy carried it at all, a says so (proxyFault): the
// site is not charged, and the URL is listed unfinished.
func (t *transport) viaProxies(req *http.Request, a *attempt) (*http.Response, error) {
	pool, domain := t.b.proxies, hostOf(req.URL.Host)
	r, carrier := proxy.Track(req) // each try through a proxy not yet tried
	var told *http.Response        // the latest failure left to tell
	var toldErr error
	for try := 1; ; try++ {
		start := time.Now()
		resp, err := t.roundTrip(r, a)
		at := proxy.Attempt{Proxy: carrier(), Domain: domain, Err: err, Latency: time.Since(start)}
		if resp != nil {
			at.Status, at.Header = resp.StatusCode, resp.Header
		}
		none := errors.Is(err, proxy.ErrAllEjected) // no proxy handed out
		a.proxyFault = pool.Record(at) || none
		if !a.proxyFault {
			discard(told)
			return resp, err
		}
		if at.Status == http.StatusUnauthorized || at.Status == http.StatusForbidden {
			a.telling++
		}
		if at.Unexplained() {
			discard(told)
			told, toldErr = keep(resp), err
			resp = nil
		}
		replay := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if try >= t.b.proxyCount || none || !replay || req.Context().Err() != nil {
			if told != nil || toldErr != nil {
				// Failing through every proxy it was tried through: the site's.
				discard(resp)
				a.proxyFault = false
				return told, toldErr
			}
			t.b.log.Warn().Str("event", "no_proxy_carried").Str("url", req.URL.String()).Int("tries", try).
				Int("status", at.Status).AnErr("error", err).Msg("breaker: no proxy of the pool carried the request; the site is not charged, the URL is kept")
			return resp, err
		}
		discard(resp)
		if req.GetBody != nil {
			if r.Body, err = req.GetBody(); err != nil {
				discard(told)
				return nil, err
			}
		}
	}
}

// discard reads a little of resp's body, for its connection to be kept,
// and closes it; nil does nothing.
func discard(resp *http.Response) {
	if resp != nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
}

// keep returns resp with its body (its first 64 KiB: a failure's page)
// read into memory, the connection let go; nil for nil.
func keep(resp *http.Response) *http.Response {
	if resp == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

// proxiesPaused returns the refusal of r while Config.Proxies is paused
// (more proxies failing than it may eject: the client side is suspect),
// nil otherwise. r is not sent to fail through no proxy: it is refused
// at once, its URL kept, and no site charged.
func (b *Breaker) proxiesPaused(r *colly.Request) *circuit.OpenError {
	if b.proxies == nil {
		return nil
	}
	until := b.proxies.PausedUntil()
	if until.IsZero() {
		return nil
	}
	return &circuit.OpenError{Key: hostOf(r.URL.Host), State: circuit.Closed, RetryAt: until}
}
