package testserver

import (
	"net/http"
	"testing"
	"time"
)

func TestDegradeRecoversAfterTFromFirstFailure(t *testing.T) {
	clk := newFakeClock()
	s := start(t, Config{Now: clk.Now, Scenario: Scenario{Mode: Degrade, After: 2, RecoverAfter: time.Minute}})
	want := []struct {
		advance time.Duration
		status  int
	}{
		{0, 200}, {0, 200}, // After: 2
		{0, 503},                // first failure: recovery clock starts
		{59 * time.Second, 503}, // 59 s later, still down
		{time.Second, 200},      // 60 s: recovered
		{time.Hour, 200},
	}
	for i, w := range want {
		clk.Advance(w.advance)
		if code, _, _ := get(t, s.ProductURL(1)); code != w.status {
			t.Errorf("request %d = %d, want %d", i+1, code, w.status)
		}
	}
	ft, seq := s.FailingSince()
	if seq != 3 || !ft.Equal(newFakeClock().Now()) {
		t.Errorf("FailingSince = %v, %d; want the start time, 3", ft, seq)
	}
}

func TestRateLimitAdmitsAboutRateOverTime(t *testing.T) {
	clk := newFakeClock()
	s := start(t, Config{Now: clk.Now, Scenario: Scenario{Mode: RateLimit, Rate: 2, Burst: 5}})

	// The burst goes through at once, then the bucket is empty.
	for i := 1; i <= 5; i++ {
		if code, _, _ := get(t, s.ProductURL(i)); code != 200 {
			t.Fatalf("burst request %d = %d, want 200", i, code)
		}
	}
	code, h, _ := get(t, s.ProductURL(6))
	if code != 429 || h.Get("Retry-After") != "1" {
		t.Fatalf("over the burst: %d, Retry-After %q; want 429, 1", code, h.Get("Retry-After"))
	}

	// Ten seconds at four requests a second: about 2/s get through.
	admitted := 0
	for range 40 {
		clk.Advance(250 * time.Millisecond)
		if code, _, _ := get(t, s.ProductURL(1)); code == 200 {
			admitted++
		}
	}
	if admitted != 20 {
		t.Errorf("admitted %d of 40 over 10 s at rate 2/s, want 20", admitted)
	}
	if got := s.CountMode(RateLimit); got != 1+20 {
		t.Errorf("CountMode(RateLimit) = %d, want 21", got)
	}
}

func TestRateLimitRetryAfterCountsToNextToken(t *testing.T) {
	clk := newFakeClock()
	s := start(t, Config{Now: clk.Now, Scenario: Scenario{Mode: RateLimit, Rate: 0.1}}) // a token per 10 s
	if code, _, _ := get(t, s.ProductURL(1)); code != 200 {
		t.Fatalf("first request = %d, want 200", code)
	}
	clk.Advance(2500 * time.Millisecond)
	code, h, _ := get(t, s.ProductURL(1))
	if code != 429 || h.Get("Retry-After") != "8" { // 7.5 s left, rounded up
		t.Errorf("got %d, Retry-After %q; want 429, 8", code, h.Get("Retry-After"))
	}
}

func TestRateLimitWith503SendsNoRetryAfter(t *testing.T) {
	clk := newFakeClock()
	s := start(t, Config{Now: clk.Now, Scenario: Scenario{Mode: RateLimit, Rate: 1, Status: 503}})
	get(t, s.ProductURL(1))
	code, h, body := get(t, s.ProductURL(1))
	if code != 503 || h.Get("Retry-After") != "" {
		t.Errorf("got %d, Retry-After %q; want 503 without Retry-After", code, h.Get("Retry-After"))
	}
	if len(body) > 100 {
		t.Errorf("rejection body is %d bytes, want a short status text", len(body))
	}
}

func TestSlopeClimbsThenMixesFailuresAndHangs(t *testing.T) {
	step := time.Millisecond
	s := start(t, Config{Scenario: Scenario{Mode: Slope, Latency: 2 * time.Millisecond, Step: step,
		FailAfter: 4, Hold: 10 * time.Millisecond}})
	tr := &http.Transport{DisableKeepAlives: true} // see TestHangEndsAfterHoldWithNoAnswer
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i := 1; i <= 10; i++ {
		resp, err := c.Get(s.ProductURL(i))
		if err == nil {
			resp.Body.Close()
		}
	}
	wantStatus := []int{200, 200, 200, 200, 503, 503, 0, 503, 503, 0}
	hits := s.Requests()
	if len(hits) != len(wantStatus) {
		t.Fatalf("store got %d requests, want %d", len(hits), len(wantStatus))
	}
	for i, h := range hits {
		if h.Status != wantStatus[i] {
			t.Errorf("request %d status %d, want %d", i+1, h.Status, wantStatus[i])
		}
		if i < 4 {
			if want := 2*time.Millisecond + time.Duration(i)*step; h.Latency != want {
				t.Errorf("request %d latency %v, want %v", i+1, h.Latency, want)
			}
		}
	}
	if s.CountMode(Slope) != 4 || s.CountMode(Hang) != 2 || s.CountMode(Healthy) != 4 {
		t.Errorf("modes: slope %d, hang %d, healthy %d; want 4, 2, 4",
			s.CountMode(Slope), s.CountMode(Hang), s.CountMode(Healthy))
	}
	if got := s.SentAfterFailing(); got != 6 {
		t.Errorf("SentAfterFailing = %d, want 6", got)
	}
}
