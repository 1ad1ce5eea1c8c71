package testserver

import (
	"errors"
	"testing"
	"time"
)

func TestParseProxyScenarioReadsTheTextForm(t *testing.T) {
	cases := []struct {
		text string
		want ProxyScenario
	}{
		{"healthy", ProxyScenario{}},
		{"REFUSE:after=30", ProxyScenario{Mode: ProxyRefuse, After: 30}},
		{"auth407", ProxyScenario{Mode: ProxyAuth407}},
		{"badgateway:after=10", ProxyScenario{Mode: ProxyBadGateway, After: 10}},
		{"latency:delay=200ms, after=5", ProxyScenario{Mode: ProxyLatency, Delay: 200 * time.Millisecond, After: 5}},
		{"block403", ProxyScenario{Mode: ProxyBlock403}},
	}
	for _, tc := range cases {
		got, err := ParseProxyScenario(tc.text)
		if err != nil || got != tc.want {
			t.Errorf("ParseProxyScenario(%q) = %+v, %v; want %+v", tc.text, got, err, tc.want)
			continue
		}
		back, err := ParseProxyScenario(got.String())
		if err != nil || back != got {
			t.Errorf("ParseProxyScenario(%q.String() = %q) = %+v, %v; does not round-trip", tc.text, got.String(), back, err)
		}
	}
}

func TestParseProxyScenarioRefusesNonsense(t *testing.T) {
	for _, text := range []string{"", "sideways", "refuse:after=-1", "latency:delay=-1s", "latency:delay=soon",
		"badgateway:colour=red", "refuse:after"} {
		if _, err := ParseProxyScenario(text); !errors.Is(err, ErrInvalidScenario) {
			t.Errorf("ParseProxyScenario(%q) = %v, want ErrInvalidScenario", text, err)
		}
	}
	if _, err := StartProxy(ProxyConfig{Scenario: ProxyScenario{Mode: 99}}); !errors.Is(err, ErrInvalidScenario) {
		t.Errorf("StartProxy with mode 99 = %v, want ErrInvalidScenario", err)
	}
	p := startProxy(t, ProxyConfig{Scenario: ProxyScenario{Mode: ProxyBadGateway}})
	if err := p.SetScenario(ProxyScenario{After: -1}); !errors.Is(err, ErrInvalidScenario) || p.Scenario().Mode != ProxyBadGateway {
		t.Errorf("SetScenario(after -1) = %v, scenario now %v; want refused, badgateway kept", err, p.Scenario())
	}
}

func TestStartProxiesClosesStartedProxiesOnError(t *testing.T) {
	f, err := StartProxies([]ProxyConfig{{}, {Scenario: ProxyScenario{Delay: -1}}})
	if !errors.Is(err, ErrInvalidScenario) || f != nil {
		t.Fatalf("StartProxies = %v, %v; want nil, ErrInvalidScenario", f, err)
	}
}
