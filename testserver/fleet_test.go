package testserver

import (
	"errors"
	"testing"
)

func TestFleetStartsStoresOnDistinctHosts(t *testing.T) {
	f, err := StartFleet([]Config{{}, {Scenario: Scenario{Mode: Degrade}}, {Scenario: Scenario{Mode: Empty}}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	for _, s := range f.Stores {
		if seen[s.Host()] {
			t.Errorf("host %s used twice", s.Host())
		}
		seen[s.Host()] = true
	}
	wantStatus := []int{200, 503, 200}
	for i, u := range f.URLs() {
		if code, _, _ := get(t, u+"/"); code != wantStatus[i] {
			t.Errorf("store %d = %d, want %d", i, code, wantStatus[i])
		}
	}
	if f.Count() != 3 {
		t.Errorf("fleet Count = %d, want 3", f.Count())
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestFleetClosesStartedStoresOnError(t *testing.T) {
	f, err := StartFleet([]Config{{}, {Addr: "0.0.0.0:0"}})
	if !errors.Is(err, ErrNotLoopback) || f != nil {
		t.Fatalf("StartFleet = %v, %v; want nil, ErrNotLoopback", f, err)
	}
}
