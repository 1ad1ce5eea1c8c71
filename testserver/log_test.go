package testserver

import (
	"sync"
	"testing"
)

func TestRequestLogCountsPathsAndResets(t *testing.T) {
	s := start(t, Config{})
	for _, n := range []int{1, 2, 1, 3, 1} {
		get(t, s.ProductURL(n))
	}
	if got := s.CountPath(ProductPath(1)); got != 3 {
		t.Errorf("CountPath(sku-1) = %d, want 3", got)
	}
	if got := s.CountPath(ProductPath(9)); got != 0 {
		t.Errorf("CountPath(sku-9) = %d, want 0", got)
	}
	hits := s.Requests()
	for i, h := range hits {
		if h.Seq != i+1 || h.Status != 200 || h.Mode != Healthy || h.Time.IsZero() {
			t.Errorf("hit %d = %+v", i, h)
		}
	}
	if hits[3].Path != "/products/sku-3" {
		t.Errorf("hit 4 path = %q", hits[3].Path)
	}
	s.Reset()
	if s.Count() != 0 || s.CountPath(ProductPath(1)) != 0 || len(s.Requests()) != 0 {
		t.Errorf("after Reset: count %d, sku-1 %d", s.Count(), s.CountPath(ProductPath(1)))
	}
	get(t, s.URL()+"/")
	if h := s.Requests()[0]; h.Seq != 1 || h.Path != "/" {
		t.Errorf("first hit after Reset = %+v, want seq 1 path /", h)
	}
}

func TestSetScenarioSwitchesAtRunTimeAndRestartsAfter(t *testing.T) {
	s := start(t, Config{})
	get(t, s.ProductURL(1))
	get(t, s.ProductURL(2))
	if err := s.SetScenario(Scenario{Mode: Degrade, After: 1}); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(t, s.ProductURL(3)); code != 200 {
		t.Errorf("first request after switch = %d, want 200 (After: 1 counts from the switch)", code)
	}
	if code, _, _ := get(t, s.ProductURL(4)); code != 503 {
		t.Errorf("second request after switch = %d, want 503", code)
	}
	if _, seq := s.FailingSince(); seq != 4 {
		t.Errorf("FailingSince seq = %d, want 4 (the log is kept across switches)", seq)
	}
	if err := s.SetScenario(Scenario{Mode: Degrade, After: -1}); err == nil {
		t.Error("SetScenario accepted After: -1")
	}
	if got := s.Scenario(); got != (Scenario{Mode: Degrade, After: 1}) {
		t.Errorf("an invalid switch changed the scenario to %v", got)
	}
	if err := s.SetScenario(Scenario{}); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(t, s.ProductURL(5)); code != 200 {
		t.Errorf("after switching back to healthy = %d, want 200", code)
	}
	if got := s.SentAfterFailing(); got != 2 {
		t.Errorf("SentAfterFailing = %d, want 2", got)
	}
}

func TestConcurrentRequestsAreAllCounted(t *testing.T) {
	s := start(t, Config{Scenario: Scenario{Mode: Degrade, After: 25}})
	const workers, each = 4, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				resp, err := client.Get(s.ProductURL(1 + (w*each+i)%DefaultProducts))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	// Read while the requests run: the race detector watches.
	for s.Count() < workers*each {
		_ = s.Requests()
		s.FailingSince()
		if t.Failed() {
			break
		}
	}
	wg.Wait()
	if got := s.Count(); got != workers*each {
		t.Errorf("Count = %d, want %d", got, workers*each)
	}
	if got := s.CountMode(Healthy); got != 25 {
		t.Errorf("healthy answers = %d, want 25", got)
	}
	if _, seq := s.FailingSince(); seq != 26 {
		t.Errorf("FailingSince seq = %d, want 26", seq)
	}
}
