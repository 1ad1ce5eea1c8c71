package redis

import (
	"hash/fnv"
	"io"
	"net/url"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// urlParser is the parser Colly normalises URLs with (colly.go's urlParser).
var urlParser = whatwg.NewParser(whatwg.WithPercentEncodeSinglePercentSign())

// requestID returns the ID Colly v2 gives a request for URL u with body
// (nil for none) on its way through Do: FNV-1a 64 of the URL as Colly
// parses and normalises it, followed by the body. It is what Colly passes
// to Storage.IsVisited and Visited, and a CollyStorage job's ID is this
// value in 16 hex digits.
func requestID(u string, body []byte) uint64 {
	// Collector.scrape parses the URL twice (whatwg, then net/url) and
	// requestCheck hashes the result normalised once more.
	if p, err := urlParser.Parse(u); err == nil {
		if pu, err := url.Parse(p.Href(false)); err == nil {
			u = pu.String()
		}
	}
	h := fnv.New64a()
	_, _ = io.WriteString(h, normalizeURL(u))
	_, _ = h.Write(body)
	return h.Sum64()
}

func normalizeURL(u string) string {
	p, err := urlParser.Parse(u)
	if err != nil {
		return u
	}
	return p.String()
}
