package proxy_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/proxy"
)

func TestNewRejectsABadConfigSayingWhatToDo(t *testing.T) {
	ok := []string{"http://a.test:1"}
	for _, tc := range []struct {
		name string
		cfg  proxy.Config
		says string
	}{
		{"no proxies", proxy.Config{}, "Proxies is empty"},
		{"not a URL", proxy.Config{Proxies: []string{"http://user:secret@a.test:x"}}, "Proxies[0] is not a URL"},
		{"no scheme", proxy.Config{Proxies: []string{"//a.test:1"}}, "needs a scheme"},
		{"ftp", proxy.Config{Proxies: []string{"ftp://a.test:1"}}, "needs a scheme"},
		{"twice", proxy.Config{Proxies: []string{"http://a.test:1", "http://b.test:2", "http://a.test:1"}}, "Proxies[2] repeats Proxies[0]"},
		{"bad settings", proxy.Config{Proxies: ok, Settings: circuit.Settings{WindowSize: 10}}, "FailureThreshold"},
		{"cap below cooldown", proxy.Config{Proxies: ok, MaxCooldown: time.Second}, "MaxCooldown"},
		{"jitter 1", proxy.Config{Proxies: ok, Jitter: 1}, "Jitter"},
		{"share above 1", proxy.Config{Proxies: ok, MaxEjectedShare: 1.5}, "MaxEjectedShare"},
		{"share negative", proxy.Config{Proxies: ok, MaxEjectedShare: -0.1}, "MaxEjectedShare"},
	} {
		_, err := proxy.New(tc.cfg)
		if !errors.Is(err, proxy.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want ErrInvalidConfig saying %q", tc.name, err, tc.says)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", tc.name, err)
		}
	}
	if _, err := proxy.New(proxy.Config{Proxies: four}); err != nil {
		t.Fatalf("zero settings: %v, want the defaults", err)
	}
}

func TestSessionsOnOneGatewayAreToldApart(t *testing.T) {
	p, err := proxy.New(proxy.Config{Proxies: []string{
		"http://user-session-1:pw@gate.test:7000", "http://user-session-2:pw@gate.test:7000"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range p.Stats() {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "gate.test:7000 gate.test:7000#2" {
		t.Fatalf("names %v, want gate.test:7000 and gate.test:7000#2", names)
	}
	fail(t, p, "http://user-session-2:pw@gate.test:7000", 3, proxy.ConnectFailed)
	if p.Ejected("http://user-session-1:pw@gate.test:7000") || !p.Ejected("http://user-session-2:pw@gate.test:7000") {
		t.Fatal("the failures of session 2 were charged to session 1")
	}
}

func TestNameNeverCarriesCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:secret@p.test:8080": "p.test:8080",
		"http://p.test":                  "p.test:80",
		"https://user@p.test":            "p.test:443",
		"socks5://u:p@[::1]:1080":        "[::1]:1080",
		"socks5h://p.test":               "p.test:1080",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := proxy.Name(u); got != want {
			t.Errorf("Name(%s) = %q, want %q", in, got, want)
		}
	}
	if proxy.Name(nil) != "" {
		t.Error("Name(nil) is not empty")
	}
}
