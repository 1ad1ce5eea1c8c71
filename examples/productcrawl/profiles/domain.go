package profiles

import (
	"net/netip"
	"strconv"
	"strings"
)

// checkPattern reports what is wrong with a domain pattern, or "" when it
// is one breaker.Config.Domains matches: an exact host, with its port
// when the crawl's URLs carry one ("shop.example.com", "127.0.0.1:8080",
// "[::1]:8080"), or a suffix starting with a dot (".example.org": every
// subdomain and example.org itself, any port). Patterns are matched
// without regard to case.
func checkPattern(pattern string) string {
	p := strings.ToLower(pattern)
	switch {
	case strings.TrimSpace(p) == "" || p == ".":
		return "an empty pattern: write a host (shop.example.com) or a suffix (.example.com)"
	case strings.Contains(p, "://") || strings.ContainsAny(p, "/?#@"):
		return "a host, not a URL: write only the host, as shop.example.com or 127.0.0.1:8080"
	case strings.Contains(p, "*"):
		return "no wildcards: a leading dot matches every subdomain (.example.com covers example.com and www.example.com)"
	case strings.ContainsAny(p, " \t"):
		return "a host has no spaces"
	}
	if suffix, ok := strings.CutPrefix(p, "."); ok {
		if strings.Contains(suffix, ":") {
			return "a suffix pattern matches any port: drop the port, or give the exact host:port"
		}
		if why := checkHostname(suffix); why != "" {
			return why
		}
		return ""
	}
	host, port := p, ""
	if strings.HasPrefix(p, "[") {
		end := strings.IndexByte(p, ']')
		if end < 0 {
			return "an IPv6 address opened with [ is not closed with ]"
		}
		host, port = p[1:end], p[end+1:]
		if _, err := netip.ParseAddr(host); err != nil {
			return "not an IPv6 address between [ and ]"
		}
		if port != "" {
			if rest, ok := strings.CutPrefix(port, ":"); ok {
				port = rest
			} else {
				return "after ] comes :port or nothing"
			}
			return checkPort(port)
		}
		return ""
	}
	if strings.Count(p, ":") > 1 {
		return "an IPv6 address goes in brackets: [::1]:8080"
	}
	if h, pt, ok := strings.Cut(p, ":"); ok {
		host, port = h, pt
		if why := checkPort(port); why != "" {
			return why
		}
	}
	return checkHostname(host)
}

func checkPort(port string) string {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '+' {
		return "the port must be a number from 1 to 65535"
	}
	return ""
}

// checkHostname accepts DNS names (letters, digits, '-' and '_' in
// dot-separated labels) and IPv4 addresses.
func checkHostname(h string) string {
	if h == "" {
		return "no host before the port"
	}
	if strings.HasSuffix(h, ".") {
		return "drop the trailing dot: URLs name the host without it"
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return "an empty label between dots"
		}
		if len(label) > 63 {
			return "a label longer than 63 characters"
		}
		for _, c := range label {
			if c > 127 {
				return "write an internationalised name in its ASCII (xn--) form, as it appears in URLs"
			}
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "a host is letters, digits, '-', '_' and dots; found " + strconv.QuoteRune(c)
			}
		}
	}
	return ""
}
