package proxy

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
)

// Pool is a set of proxies, each with its own circuit, and the rotation
// over those not ejected. Make one with New; it is safe for concurrent
// use.
type Pool struct {
	cfg     Config
	circuit circuit.Settings // cfg.Settings with the shortest cooldown: the Pool holds it open
	most    int              // how many proxies may be ejected at once
	draw    func() float64   // the jitter's draw, in [0, 1)

	mu      sync.Mutex
	members []*member
	byKey   map[string]*member // the URL as given and as Colly reports it, and the name
	next    int                // the rotation's next index
	ejected int                // members open or half-open
	views   map[string]*view   // per domain that refused a proxy: Record's comparison
	paused  atomic.Int64       // unix nanos: the client side suspect, no proxy handed out before; written under mu
	queued  []event            // for unlock to tell
}

// member is one proxy of the pool; the Pool's mutex guards it.
type member struct {
	idx     int // in Pool.members
	name    string
	url     *url.URL
	str     string // url.String(), as Colly's switcher stores it
	c       circuit.Local
	state   circuit.State // closed: in the rotation; open: ejected; half-open: probing
	retryAt time.Time     // open: when it may be probed
	probes  int           // probes handed out and not yet recorded
	probe   circuit.Ticket
	probeAt time.Time // when the latest probe was handed out

	streak    int       // ejections in a row, the cooldown's multiple
	backAt    time.Time // when it last came back into the rotation
	ejections int
	held      bool // its ejection was refused by MaxEjectedShare; no success since

	sent     int64
	outcomes [numOutcomes]int64
	recent   recent // the latest judged attempts, for outlierness
}

// Snapshot is one proxy's state and counts, for reports and metrics.
type Snapshot struct {
	// Name is the proxy's host:port (the scheme's default port when its
	// URL names none), never its credentials;
	// host:port#2, #3… for more entries on one host:port.
	Name string
	// State is closed while the proxy is in the rotation, open while it
	// is ejected, half-open while its probe decides.
	State circuit.State
	// RetryAt is when an ejected proxy gets its probe.
	RetryAt time.Time
	// Ejections counts every ejection so far.
	Ejections int
	// Held is set while the proxy is failing but kept in the rotation by
	// MaxEjectedShare, until a request through it is carried.
	Held bool
	// Sent counts the requests the rotation (ProxyFunc or Ejected) gave it.
	Sent int64
	// Outcomes counts the recorded attempts by what they said of the
	// proxy: carried, connect_failed, auth_failed, proxy_error (its own,
	// by Proxy-Status), blocked (a site refusing it alone), outlier (a
	// bare 5xx or lost answer from a site other proxies reach, through a
	// proxy failing where the others carry), not_judged; absent is 0.
	Outcomes map[string]int64
}

// New validates cfg and returns its Pool, every proxy in the rotation.
// Errors wrap ErrInvalidConfig and say which field is wrong and what to
// give instead.
func New(cfg Config) (*Pool, error) {
	cfg, urls, err := cfg.normalise()
	if err != nil {
		return nil, err
	}
	p := &Pool{cfg: cfg, circuit: cfg.Settings, draw: rand.Float64, byKey: map[string]*member{}, views: map[string]*view{}}
	p.circuit.Cooldown = time.Nanosecond // the Pool holds each trip open for the ejection's own cooldown
	p.most = max(1, int(cfg.MaxEjectedShare*float64(len(urls))+1e-9))
	names := map[string]int{}
	for _, u := range urls {
		name := nameOf(u)
		if names[name]++; names[name] > 1 {
			name = fmt.Sprintf("%s#%d", name, names[name])
		}
		m := &member{idx: len(p.members), name: name, url: u, str: u.String(), c: circuit.NewLocal(name, &p.circuit, nil)}
		p.members = append(p.members, m)
		for _, k := range []string{u.String(), name} {
			if _, dup := p.byKey[k]; !dup {
				p.byKey[k] = m
			}
		}
	}
	for i, s := range cfg.Proxies {
		if _, dup := p.byKey[s]; !dup {
			p.byKey[s] = p.members[i]
		}
	}
	return p, nil
}

// lookupLocked finds the member proxy names: the URL as given in
// Config.Proxies or as Colly reports it (Request.ProxyURL), or its name.
func (p *Pool) lookupLocked(proxy string) *member {
	if m := p.byKey[proxy]; m != nil {
		return m
	}
	if u, err := url.Parse(proxy); err == nil && u.Host != "" {
		return p.byKey[nameOf(u)]
	}
	return nil
}

// Stats returns every proxy's Snapshot, in the order of Config.Proxies.
func (p *Pool) Stats() []Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Snapshot, len(p.members))
	for i, m := range p.members {
		out[i] = m.snapshotLocked()
	}
	return out
}

func (m *member) snapshotLocked() Snapshot {
	s := Snapshot{Name: m.name, State: m.state, Ejections: m.ejections, Held: m.held, Sent: m.sent,
		Outcomes: map[string]int64{}}
	if m.state == circuit.Open {
		s.RetryAt = m.retryAt
	}
	for o, n := range m.outcomes {
		if n > 0 {
			s.Outcomes[outcome(o).String()] = n
		}
	}
	return s
}
