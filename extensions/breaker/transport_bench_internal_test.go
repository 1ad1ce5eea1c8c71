package breaker

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ctxBase stands for net/http's transport as a request's context sees it:
// it derives a context of its own from the request's, waits on it, and
// cancels it once the body is read, without any network.
type ctxBase struct{}

func (ctxBase) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	select {
	case <-ctx.Done():
		cancel(nil)
		return nil, context.Cause(ctx)
	default:
	}
	return &http.Response{StatusCode: 200, Body: &doneBody{Reader: strings.NewReader("ok"), cancel: cancel}, Request: req}, nil
}

type doneBody struct {
	io.Reader
	cancel context.CancelCauseFunc
}

func (b *doneBody) Close() error { b.cancel(nil); return nil }

// BenchmarkRequestTimeout is the cost of the adaptive timeout for one
// request that ends in time: the breaker's deadline watch, side by side
// with a context.WithTimeout per request (what the transport did before).
// The parent is a fresh deadline context per request, as http.Client
// makes one of its Timeout.
//
//	go test -run '^$' -bench RequestTimeout -benchmem ./extensions/breaker/
func BenchmarkRequestTimeout(b *testing.B) {
	br, err := New(Config{Profile: Standard()})
	if err != nil {
		b.Fatal(err)
	}
	d, err := br.set.Pin("shop.test")
	if err != nil {
		b.Fatal(err)
	}
	d.SetTimeout(2 * time.Second)
	req, _ := http.NewRequest("GET", "http://shop.test/p", nil)
	crawl, stop := context.WithCancel(context.Background())
	defer stop()
	read := func(b *testing.B, resp *http.Response, err error) {
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.Run("breakwater/deadlines", func(b *testing.B) {
		t := newTransport(br, ctxBase{})
		a := &attempt{crawl: crawl}
		b.ReportAllocs()
		for b.Loop() {
			parent, cancel := context.WithDeadline(crawl, time.Now().Add(10*time.Second))
			resp, err := t.roundTrip(req.WithContext(parent), a)
			read(b, resp, err)
			cancel()
		}
	})
	b.Run("context/WithTimeout", func(b *testing.B) {
		base := ctxBase{}
		b.ReportAllocs()
		for b.Loop() {
			parent, cancel := context.WithDeadline(crawl, time.Now().Add(10*time.Second))
			ctx, stop := context.WithTimeoutCause(parent, 2*time.Second, &TimeoutError{Domain: d.Name, After: 2 * time.Second})
			resp, err := base.RoundTrip(req.WithContext(ctx))
			if err != nil {
				stop()
			} else {
				resp.Body = &stopBody{ReadCloser: resp.Body, stop: stop}
			}
			read(b, resp, err)
			cancel()
		}
	})
}

type stopBody struct {
	io.ReadCloser
	stop context.CancelFunc
}

func (b *stopBody) Close() error { err := b.ReadCloser.Close(); b.stop(); return err }
