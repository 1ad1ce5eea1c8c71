package testserver

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// respond carries out plan p: waits, then answers, hangs or cuts the body.
func (s *Store) respond(w http.ResponseWriter, r *http.Request, p plan) {
	if p.mode == Hang {
		s.wait(r.Context(), p.hold)
		abort(w) // a hang ends with the connection closed and no answer
		return
	}
	if !s.wait(r.Context(), p.latency) {
		abort(w)
		return
	}
	body := s.render(p)
	if p.mode == Truncated {
		truncate(w, p.status, body, p.cut)
		return
	}
	h := w.Header()
	if len(body) > 0 {
		h.Set("Content-Type", contentType(p))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.retryAfter))
	}
	w.WriteHeader(p.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // a client gone away is not the store's error
	}
}

// wait waits d, and reports false if the store closed or the client went away
// first.
func (s *Store) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

func (s *Store) render(p plan) []byte {
	switch p.body {
	case bodyRoute:
		switch p.route.kind {
		case routeListing:
			return s.cat.ListingPage(p.route.n)
		case routeProduct:
			return s.cat.ProductPage(p.route.n)
		case routeSitemap:
			return s.cat.Sitemap(s.url)
		}
		return []byte(notFoundPage)
	case bodyRestyled:
		return s.cat.RestyledProductPage(p.route.n)
	case bodyConsent:
		return []byte(consentShell)
	case bodyBlock:
		return []byte(blockPage)
	case bodyNotFound:
		return []byte(notFoundPage)
	case bodyStatusText:
		return []byte(http.StatusText(p.status) + "\n")
	}
	return nil
}

func contentType(p plan) string {
	switch {
	case p.body == bodyStatusText:
		return "text/plain; charset=utf-8"
	case p.body == bodyRoute && p.route.kind == routeSitemap:
		return "application/xml; charset=utf-8"
	}
	return "text/html; charset=utf-8"
}

// abort closes the connection without an answer. The client sees the
// connection end (EOF or reset) where a response should be.
func abort(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	if conn, _, err := hj.Hijack(); err == nil {
		_ = conn.Close()
	}
}

// truncate writes a response that declares len(body) bytes, sends only cut of
// them and closes the connection, the way an origin under load cuts a page
// off. The client's read ends in io.ErrUnexpectedEOF.
func truncate(w http.ResponseWriter, status int, body []byte, cut int) {
	if cut <= 0 {
		cut = len(body) / 3
	}
	cut = min(cut, len(body)-1)
	hj, ok := w.(http.Hijacker)
	if !ok || cut < 0 {
		// Not reachable on the store's own HTTP/1.1 server; answer whole.
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	bw := rw.Writer
	if bw == nil {
		bw = bufio.NewWriter(conn)
	}
	bw.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	bw.WriteString("Content-Type: text/html; charset=utf-8\r\n")
	bw.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	bw.WriteString("Date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n")
	bw.WriteString("Connection: close\r\n\r\n")
	bw.Write(body[:cut])
	_ = bw.Flush()
	finish(conn)
}

// finish ends a cut answer the way an origin does: it closes its side (FIN),
// then waits briefly for the client to close its own before letting go of the
// socket. Closing at once with the client's bytes unread would send a reset
// that can discard the answer the client has not read yet; on a reused
// keep-alive connection net/http then re-sends the request on a new one, and
// the store would log two requests for the client's one.
func finish(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
	}
}
