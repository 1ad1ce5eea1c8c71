package testserver

import "errors"

// ProxyFleet is several proxies started together, each on its own port: a
// crawler's proxy pool, some of it bad.
type ProxyFleet struct {
	Proxies []*Proxy // in the order of the configs given to StartProxies
}

// StartProxies starts one proxy per config; StartProxies(make([]ProxyConfig,
// n)) starts n healthy ones. If any fails to start, the ones already
// started are closed and the error is returned.
func StartProxies(cfgs []ProxyConfig) (*ProxyFleet, error) {
	f := &ProxyFleet{Proxies: make([]*Proxy, 0, len(cfgs))}
	for _, cfg := range cfgs {
		p, err := StartProxy(cfg)
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		f.Proxies = append(f.Proxies, p)
	}
	return f, nil
}

// URLs returns each proxy's URL, in order: the list for colly's
// proxy.RoundRobinProxySwitcher.
func (f *ProxyFleet) URLs() []string {
	out := make([]string, len(f.Proxies))
	for i, p := range f.Proxies {
		out[i] = p.URL()
	}
	return out
}

// Count returns the number of requests all proxies received.
func (f *ProxyFleet) Count() int {
	n := 0
	for _, p := range f.Proxies {
		n += p.Count()
	}
	return n
}

// Forwarded returns the number of requests all proxies sent on to a target.
func (f *ProxyFleet) Forwarded() int {
	n := 0
	for _, p := range f.Proxies {
		n += p.Forwarded()
	}
	return n
}

// Close closes every proxy and returns their errors joined.
func (f *ProxyFleet) Close() error {
	errs := make([]error, 0, len(f.Proxies))
	for _, p := range f.Proxies {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
