package testserver

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ProxyMode is how a Proxy treats the requests it is asked to forward: the
// ways one proxy of a crawler's pool goes bad while the sites behind it are
// fine. A ProxyHit records the mode that answered.
type ProxyMode int

// The proxy modes. The package documentation says what each does on the
// wire.
const (
	// ProxyHealthy forwards every request and hands back the site's answer.
	ProxyHealthy ProxyMode = iota
	// ProxyRefuse stops listening: a new connection is refused by the
	// kernel (ECONNREFUSED, "connection refused"), an idle kept-alive one
	// is closed, and a request already on its way is cut with a reset. The
	// proxy logs nothing for a refused connection: it never sees it.
	ProxyRefuse
	// ProxyAuth407 answers 407 Proxy Authentication Required with a
	// Proxy-Authenticate challenge (credentials expired, the plan ran out).
	ProxyAuth407
	// ProxyBadGateway answers 502 Bad Gateway without contacting the site
	// (the proxy's own upstream failing).
	ProxyBadGateway
	// ProxyLatency waits ProxyScenario.Delay, then forwards.
	ProxyLatency
	// ProxyBlock403 answers 403 with BlockPage for every site, never
	// contacting it: an exit address the sites have banned.
	ProxyBlock403
)

var proxyModeNames = [...]string{"healthy", "refuse", "auth407", "badgateway", "latency", "block403"}

// String returns the mode's name as ParseProxyMode reads it.
func (m ProxyMode) String() string {
	if m >= 0 && int(m) < len(proxyModeNames) {
		return proxyModeNames[m]
	}
	return "proxymode(" + strconv.Itoa(int(m)) + ")"
}

// ParseProxyMode returns the proxy mode named s (case-insensitive), e.g.
// "badgateway".
func ParseProxyMode(s string) (ProxyMode, error) {
	for i, name := range proxyModeNames {
		if strings.EqualFold(s, name) {
			return ProxyMode(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown proxy mode %q (want one of %s)", ErrInvalidScenario, s, strings.Join(proxyModeNames[:], ", "))
}

// DefaultProxyDelay is ProxyLatency's wait when ProxyScenario.Delay is 0.
const DefaultProxyDelay = 500 * time.Millisecond

// ProxyScenario says how a Proxy behaves. The first After requests since
// the scenario was set (or since Reset) are forwarded healthy; from then on
// Mode decides. The zero ProxyScenario is a healthy proxy.
type ProxyScenario struct {
	Mode ProxyMode

	// After is the number of requests forwarded healthy before Mode
	// starts: BadGateway with After 30 forwards 30 requests, then answers
	// 502s. A Refuse scenario stops listening as soon as its After-th
	// request has arrived (at once with After 0); that request is still
	// forwarded.
	After int

	// Delay is what ProxyLatency waits before forwarding; 0 means
	// DefaultProxyDelay. The wait ends early when the client goes away or
	// the proxy is closed (the request is then not forwarded). Other modes
	// ignore it.
	Delay time.Duration
}

// Validate reports whether s can be served; the error wraps
// ErrInvalidScenario.
func (s ProxyScenario) Validate() error {
	switch {
	case s.Mode < 0 || int(s.Mode) >= len(proxyModeNames):
		return fmt.Errorf("%w: unknown proxy mode %d", ErrInvalidScenario, int(s.Mode))
	case s.After < 0:
		return fmt.Errorf("%w: proxy after=%d is negative", ErrInvalidScenario, s.After)
	case s.Delay < 0:
		return fmt.Errorf("%w: proxy delay=%v is negative", ErrInvalidScenario, s.Delay)
	}
	return nil
}

// delay is Delay with its default.
func (s ProxyScenario) delay() time.Duration {
	if s.Delay == 0 {
		return DefaultProxyDelay
	}
	return s.Delay
}

// ProxyScenarioKeys is the help text for the keys of a proxy scenario's
// text form, one per line.
const ProxyScenarioKeys = `  after=N        forward N requests healthy before the mode starts
  delay=D        latency: wait D before forwarding (default 500ms)`

// ParseProxyScenario reads the text form "mode" or "mode:key=value,...",
// for example "badgateway:after=30" or "latency:delay=200ms".
// ProxyScenarioKeys lists the keys.
func ParseProxyScenario(text string) (ProxyScenario, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(text), ":")
	m, err := ParseProxyMode(name)
	if err != nil {
		return ProxyScenario{}, err
	}
	s := ProxyScenario{Mode: m}
	if rest != "" {
		for kv := range strings.SplitSeq(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return ProxyScenario{}, fmt.Errorf("%w: %q in %q is not key=value", ErrInvalidScenario, kv, text)
			}
			if err := s.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
				return ProxyScenario{}, err
			}
		}
	}
	return s, s.Validate()
}

// proxyScenarioFromQuery reads a proxy scenario from URL query parameters,
// mode=... and the keys of the text form, as the admin endpoint takes them.
func proxyScenarioFromQuery(q url.Values) (ProxyScenario, error) {
	m, err := ParseProxyMode(q.Get("mode"))
	if err != nil {
		return ProxyScenario{}, err
	}
	s := ProxyScenario{Mode: m}
	for k, vs := range q {
		if k == "mode" {
			continue
		}
		if err := s.set(k, vs[len(vs)-1]); err != nil {
			return ProxyScenario{}, err
		}
	}
	return s, s.Validate()
}

func (s *ProxyScenario) set(key, value string) error {
	var err error
	switch strings.ToLower(key) {
	case "after":
		err = atoi(value, &s.After)
	case "delay":
		err = atod(value, &s.Delay)
	default:
		return fmt.Errorf("%w: unknown proxy key %q (want after or delay)", ErrInvalidScenario, key)
	}
	if err != nil {
		return fmt.Errorf("%w: %s=%q: %w", ErrInvalidScenario, key, value, err)
	}
	return nil
}

// String returns the text form ParseProxyScenario reads, with the fields
// that are not zero: "badgateway:after=30".
func (s ProxyScenario) String() string {
	var parts []string
	if s.After != 0 {
		parts = append(parts, "after="+strconv.Itoa(s.After))
	}
	if s.Delay != 0 {
		parts = append(parts, "delay="+s.Delay.String())
	}
	if len(parts) == 0 {
		return s.Mode.String()
	}
	return s.Mode.String() + ":" + strings.Join(parts, ",")
}
