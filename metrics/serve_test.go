package metrics_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

func TestServeStopsWithItsContext(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg, metrics.Config{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := metrics.Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "http://"), metrics.Path)
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), metrics.Path) || strings.HasSuffix(addr, ":0") {
		t.Fatalf("URL %s: want the port actually chosen", srv.URL())
	}
	// Listening happened before Serve returned: the port is taken now.
	if _, err := metrics.Serve(context.Background(), addr, reg); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("a second Serve on %s: %v, want an error naming the address", addr, err)
	}
	scrape(t, srv.URL())
	resp, err := http.Get("http://" + addr + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/other answered %d, want 404: only /metrics is served", resp.StatusCode)
	}

	cancel()
	// The cancelled context alone stops the server: its port stops
	// accepting connections before Close is called.
	for deadline := time.Now().Add(metrics.ShutdownTimeout + time.Second); ; {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server did not stop when its context was cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after stop = %v", err)
	}
}

func TestCloseStopsTheServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	srv, err := metrics.Serve(context.Background(), "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := (&http.Client{Timeout: time.Second}).Get(srv.URL()); err == nil {
		t.Fatal("served after Close")
	}
	if _, err := metrics.Serve(context.Background(), "127.0.0.1:0", nil); err == nil {
		t.Error("Serve without a Gatherer was accepted")
	}
	if _, err := metrics.Serve(context.Background(), "127.0.0.1:99999", reg); err == nil {
		t.Error("Serve on port 99999 was accepted")
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(nil, metrics.Config{}); err == nil {
		t.Error("New(nil) accepted")
	}
	for name, opt := range map[string]metrics.Config{
		"no buckets":         {Buckets: []float64{}},
		"unsorted buckets":   {Buckets: []float64{1, 0.5}},
		"repeated bucket":    {Buckets: []float64{0.5, 0.5, 1}},
		"zero bucket":        {Buckets: []float64{0, 1}},
		"negative read time": {ReadTimeout: -time.Second},
	} {
		if _, err := metrics.New(reg, opt); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Rejected options registered nothing: the registry takes a good set.
	if _, err := metrics.New(reg, metrics.Config{Buckets: []float64{0.1, 1, 10}}); err != nil {
		t.Fatalf("New after rejected options: %v", err)
	}
	_, err := metrics.New(reg, metrics.Config{})
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		t.Errorf("a second Metrics on one registry: %v, want prometheus.AlreadyRegisteredError", err)
	}
	// Two crawls share a registry by a label that tells them apart.
	shared := prometheus.NewRegistry()
	for _, crawl := range []string{"shop", "catalogue"} {
		if _, err := metrics.New(prometheus.WrapRegistererWith(prometheus.Labels{"crawl": crawl}, shared), metrics.Config{}); err != nil {
			t.Errorf("crawl %s on a wrapped registry: %v", crawl, err)
		}
	}
	if _, err := shared.Gather(); err != nil {
		t.Errorf("the shared registry does not gather: %v", err)
	}
}
