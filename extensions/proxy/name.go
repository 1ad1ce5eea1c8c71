package proxy

import (
	"net"
	"net/url"
)

// defaultPorts are the ports a proxy URL without one is reached on.
var defaultPorts = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}

// nameOf is how a proxy is named wherever Breakwater names it (logs,
// hooks, Stats, reports): host:port, with the scheme's default port when
// u has none, and never the user name or password. A nil u is "".
func nameOf(u *url.URL) string {
	if u == nil {
		return ""
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = defaultPorts[u.Scheme]
	}
	if port == "" {
		return host
	}
	return net.JoinHostPort(host, port)
}
