package collyx

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	whatwgUrl "github.com/nlnwa/whatwg-url/url"
)

// urlParser is the parser Colly reads every URL with (colly.go's
// urlParser).
var urlParser = whatwgUrl.NewParser(whatwgUrl.WithPercentEncodeSinglePercentSign())

// ParseURL returns raw as Colly's Collector.scrape makes it before it
// sends, checks or hashes it: parsed by the WHATWG parser, then by
// net/url from that serialisation. Its String is the URL a Request's URL
// holds; its Host is the one Colly matches AllowedDomains (Hostname) and
// LimitRules against: an internationalised name in its ASCII (xn--) form,
// an IPv4 address in dotted decimal however it was written, an IPv6
// address compressed, lower case, the scheme's default port dropped.
func ParseURL(raw string) (*url.URL, error) {
	w, err := urlParser.Parse(raw)
	if err != nil {
		return nil, err
	}
	return url.Parse(w.Href(false))
}

// normalizeURL normalises u as Colly does before hashing it (colly.go's
// normalizeURL): the WHATWG parse, skipped where it would change nothing
// (isNormalURL).
func normalizeURL(u string) string {
	if isNormalURL(u) {
		return u
	}
	p, err := urlParser.Parse(u)
	if err != nil {
		return u
	}
	return p.String()
}

// RequestID returns the ID Colly gives a request whose URL, as scrape
// left it (a Request's URL.String()), is u, with body (nil for none):
// colly.go's requestHash, FNV-1a 64 of the normalised URL followed by the
// body. It is what Colly passes to Storage.Visited and IsVisited, and the
// key of the checkpoint's records.
func RequestID(u string, body []byte) uint64 {
	h := uint64(fnvOffset64)
	n := normalizeURL(u)
	for i := 0; i < len(n); i++ {
		h = (h ^ uint64(n[i])) * fnvPrime64
	}
	for _, c := range body {
		h = (h ^ uint64(c)) * fnvPrime64
	}
	return h
}

// VisitID returns the ID of a request for raw as given to Visit or Do
// (scrape's parse first, ParseURL, then RequestID), or RequestID of raw
// as it is when ParseURL refuses it.
func VisitID(raw string, body []byte) uint64 {
	if u, err := ParseURL(raw); err == nil {
		raw = u.String()
	}
	return RequestID(raw, body)
}

// FNV-1a 64, as hash/fnv's New64a (written out here so that hashing a
// string allocates nothing).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// isNormalURL reports whether u is certainly left as it is by the WHATWG
// parse normalizeURL does, so the parse (about 40 allocations, most of a
// request's ID) can be skipped. It is deliberately narrow: an http or
// https URL with a lower-case host name or canonical dotted IPv4 address,
// a port only if it is not the scheme's default and has no leading zero,
// a path and query of characters the parse never escapes, no dot segment,
// no percent sign, no user info, no fragment. Everything else (a URL
// where it is not sure) takes the parse.
func isNormalURL(u string) bool {
	var rest string
	switch {
	case strings.HasPrefix(u, "http://"):
		rest = u[len("http://"):]
	case strings.HasPrefix(u, "https://"):
		rest = u[len("https://"):]
	default:
		return false
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return false // the parse adds the root path
	}
	host, path := rest[:slash], rest[slash:]
	if h, port, ok := strings.Cut(host, ":"); ok {
		if !normalPort(port, len(u)-len(rest) == len("https://")) {
			return false
		}
		host = h
	}
	return normalHost(host) && normalPathQuery(path)
}

// normalPort: 1 to 65535 in decimal, no leading zero, not the scheme's
// default (the parse drops it).
func normalPort(p string, https bool) bool {
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && p[0] != '0' && !(https && n == 443 || !https && n == 80)
}

// normalHost: dot-separated labels of a-z, 0-9 and inner hyphens (none
// empty, none longer than 63, no punycode or other "??--" label), whose
// last label does not start with a digit (the parse reads such a host as
// an IPv4 address), or else a canonical dotted IPv4 address (four
// decimal parts 0-255, no leading zeros).
func normalHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last != "" && last[0] >= '0' && last[0] <= '9' {
		a, err := netip.ParseAddr(h)
		return err == nil && a.Is4()
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' ||
			len(label) >= 4 && label[2] == '-' && label[3] == '-' {
			return false // an empty label is a leading, trailing or double dot
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// normalPathQuery: a path from the first slash, optionally a query, in
// characters the parse keeps as they are (letters, digits and
// -._~!$&()*+,;=:@/, plus ? in the query), with no "." or ".." segment.
func normalPathQuery(pq string) bool {
	path, query, _ := strings.Cut(pq, "?")
	for i := 0; i < len(path); i++ {
		if !normalURLBytes[path[i]] {
			return false
		}
		if path[i] == '.' && path[i-1] == '/' { // path[0] is '/'
			end := i + 1
			if end < len(path) && path[end] == '.' {
				end++
			}
			if end == len(path) || path[end] == '/' {
				return false // a dot segment
			}
		}
	}
	for i := 0; i < len(query); i++ {
		if c := query[i]; !normalURLBytes[c] && c != '?' {
			return false
		}
	}
	return true
}

// normalURLBytes are the bytes normalPathQuery accepts.
var normalURLBytes = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("-._~!$&()*+,;=:@/") {
		t[c] = true
	}
	return t
}()
