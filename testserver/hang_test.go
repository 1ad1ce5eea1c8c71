package testserver

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestHangIsReleasedByClose(t *testing.T) {
	s, err := Start(Config{Scenario: Scenario{Mode: Hang}}) // Hold: the default 30 s
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.ProductURL(1), nil)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitCount(t, s, 1)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err = <-errc
	if err == nil {
		t.Fatal("hanging request got an answer, want a closed connection")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging request was not released by Close: %v", err)
	}
	if h := s.Requests()[0]; h.Mode != Hang || h.Status != 0 {
		t.Errorf("hit = %+v, want mode hang, status 0", h)
	}
}

func TestHangEndsAfterHoldWithNoAnswer(t *testing.T) {
	s := start(t, Config{Scenario: Scenario{Mode: Hang, Hold: 20 * time.Millisecond}})
	// A fresh connection each time: a Go client retries a GET once when a
	// reused keep-alive connection closes unanswered.
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(s.ProductURL(1))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("hang answered %d, want no answer", resp.StatusCode)
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		t.Fatalf("hang outlived its 20ms hold: %v", err)
	}
	if got := s.CountMode(Hang); got != 1 {
		t.Errorf("CountMode(Hang) = %d, want 1", got)
	}
}

func TestLatencyWaitIsReleasedByClose(t *testing.T) {
	s, err := Start(Config{Scenario: Scenario{Latency: time.Hour}}) // capped at Hold, 30 s
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := client.Get(s.ProductURL(1))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitCount(t, s, 1)
	if h := s.Requests()[0]; h.Latency != DefaultHold {
		t.Errorf("latency = %v, want capped at %v", h.Latency, DefaultHold)
	}
	s.Close()
	if err := <-errc; err == nil {
		t.Error("request waiting out its latency was answered after Close, want a closed connection")
	}
}
