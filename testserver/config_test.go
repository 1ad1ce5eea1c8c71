package testserver

import (
	"errors"
	"testing"
)

func TestStartRefusesNonLoopbackUnlessAllowed(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		if s, err := Start(Config{Addr: addr}); !errors.Is(err, ErrNotLoopback) {
			if s != nil {
				s.Close()
			}
			t.Errorf("Start(Addr %q) error = %v, want ErrNotLoopback", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		s, err := Start(Config{Addr: addr})
		if err != nil {
			if addr == "[::1]:0" {
				continue // no IPv6 loopback on this machine
			}
			t.Errorf("Start(Addr %q): %v", addr, err)
			continue
		}
		s.Close()
	}
}

func TestStartRefusesInvalidScenario(t *testing.T) {
	if _, err := Start(Config{Scenario: Scenario{Mode: Degrade, After: -3}}); !errors.Is(err, ErrInvalidScenario) {
		t.Errorf("Start with After -3: %v, want ErrInvalidScenario", err)
	}
	if _, err := Start(Config{Addr: "nonsense"}); err == nil {
		t.Error("Start with Addr nonsense succeeded")
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	s, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := client.Get(s.URL() + "/"); err == nil {
		t.Error("a closed store still answers")
	}
}
