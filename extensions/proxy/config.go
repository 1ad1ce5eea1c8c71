package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/url"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/clock"
	"github.com/rs/zerolog"
)

// ErrInvalidConfig is wrapped by every error New returns.
var ErrInvalidConfig = errors.New("proxy: invalid pool config")

// defaultSettings is each proxy's circuit when Config.Settings is zero.
var defaultSettings = circuit.Settings{WindowSize: 10, FailureThreshold: 0.5, ConsecutiveFailures: 3,
	Cooldown: 30 * time.Second, HalfOpenProbes: 1}

// Config is a Pool's settings, validated once by New. Zero fields take
// the defaults each one names.
type Config struct {
	// Proxies are the proxy URLs, as Colly's RoundRobinProxySwitcher
	// takes them: http, https, socks5 or socks5h, with a host, each once.
	// Credentials (http://user:password@host:port) are used, never shown.
	// Two entries may share a host:port with different credentials (a
	// provider's gateway with a session per user name): they are told
	// apart as host:port#2, host:port#3…
	Proxies []string
	// Settings is each proxy's circuit: when it trips, the proxy is
	// ejected. Its Cooldown is the first ejection's; its HalfOpenProbes
	// how many probes must pass to restore the proxy. Zero: ejected after
	// 3 failures in a row (Crawlee's error score of 3) or 5 of its last
	// 10 outcomes, a 30 s first cooldown, one probe.
	Settings circuit.Settings
	// MaxCooldown caps the cooldown, which grows as Cooldown × the
	// proxy's ejections in a row; a proxy back in the rotation works
	// one ejection off that count per Cooldown it stays in. Zero: 10 ×
	// Cooldown. It must be at least Cooldown.
	MaxCooldown time.Duration
	// Jitter shortens each cooldown by a random share of it, up to
	// Jitter, so that proxies ejected together are not probed together.
	// Zero: 0.2; negative: none. It must be below 1.
	Jitter float64
	// MaxEjectedShare is the most of the pool ejected at once (rounded
	// down, at least one proxy). A proxy whose circuit trips past it stays
	// in the pool, ClientSide reports the client side, and the pool
	// pauses: no proxy is handed out (ProxyFunc fails with ErrAllEjected,
	// Ejected says true) for Settings.Cooldown, as when every proxy is
	// ejected; then the rotation goes on. Zero: 0.5. It must be in (0, 1].
	MaxEjectedShare float64
	// Clock is the time source (tests pass a clocktest.Fake). Zero:
	// clock.System.
	Clock clock.Clock
	// Logger, when given, logs every ejection, restoration and client-side
	// suspicion as one structured event. Without it the Pool is silent.
	Logger zerolog.Logger
	// The hooks are called after the event, outside the Pool's lock, in
	// the goroutine that caused it (a ProxyFunc or Record call); they must
	// not block. OnEject and OnRestore get the proxy's state just after;
	// OnClientSide gets ClientSide's error each time a proxy's ejection is
	// refused by MaxEjectedShare, or the last proxy is ejected.
	OnEject      func(Snapshot)
	OnRestore    func(Snapshot)
	OnClientSide func(error)
}

// normalise fills c's zero fields and reports the first bad one.
func (c Config) normalise() (Config, []*url.URL, error) {
	bad := func(format string, args ...any) (Config, []*url.URL, error) {
		return c, nil, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if len(c.Proxies) == 0 {
		return bad("Proxies is empty: give at least one proxy URL, such as http://host:port")
	}
	urls := make([]*url.URL, len(c.Proxies))
	seen := map[string]int{}
	for i, s := range c.Proxies {
		u, err := url.Parse(s)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // its text would repeat the credentials
			}
			return c, nil, fmt.Errorf("%w: Proxies[%d] is not a URL (%w): write it as scheme://[user:password@]host:port", ErrInvalidConfig, i, err)
		}
		if _, ok := defaultPorts[u.Scheme]; !ok || u.Hostname() == "" {
			return bad("Proxies[%d] (%s) needs a scheme of http, https, socks5 or socks5h and a host: write it as http://host:port", i, nameOf(u))
		}
		if j, dup := seen[u.String()]; dup {
			return bad("Proxies[%d] repeats Proxies[%d] (%s): list each proxy once", i, j, nameOf(u))
		}
		seen[u.String()] = i
		urls[i] = u
	}
	if c.Settings == (circuit.Settings{}) {
		c.Settings = defaultSettings
	}
	if err := c.Settings.Validate(); err != nil {
		return c, nil, fmt.Errorf("%w: Settings: %w", ErrInvalidConfig, err)
	}
	if c.MaxCooldown == 0 {
		c.MaxCooldown = 10 * c.Settings.Cooldown
	}
	if c.MaxCooldown < c.Settings.Cooldown {
		return bad("MaxCooldown %v is below Settings.Cooldown %v: give 0 (10 × Cooldown) or at least Cooldown", c.MaxCooldown, c.Settings.Cooldown)
	}
	switch {
	case math.IsNaN(c.Jitter) || c.Jitter >= 1:
		return bad("Jitter %v must be below 1 (0: the default 0.2; negative: none)", c.Jitter)
	case c.Jitter == 0:
		c.Jitter = 0.2
	case c.Jitter < 0:
		c.Jitter = 0
	}
	if c.MaxEjectedShare == 0 {
		c.MaxEjectedShare = 0.5
	}
	if math.IsNaN(c.MaxEjectedShare) || c.MaxEjectedShare < 0 || c.MaxEjectedShare > 1 {
		return bad("MaxEjectedShare %v must be in (0, 1]: 0.5 ejects at most half the pool", c.MaxEjectedShare)
	}
	c.Clock = cmp.Or(c.Clock, clock.System)
	return c, urls, nil
}
