package storage

import (
	"net/url"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
)

// Identify returns what Colly makes of a request for rawURL (as given to
// Visit or Request) with body (nil for none): u, the URL it sends, checks
// and hashes, parsed as Colly parses it (the WHATWG parser, then net/url:
// an internationalised host in its ASCII form, an IPv4 address in dotted
// decimal, lower case, the scheme's default port dropped), whose Host is
// the one Colly matches AllowedDomains and LimitRules against; and id,
// the ID Colly passes its storage's IsVisited and Visited, which a Record
// is keyed by. When Colly's parser refuses rawURL, err says why and id is
// the ID of rawURL as given.
func Identify(rawURL string, body []byte) (u *url.URL, id uint64, err error) {
	u, err = collyx.ParseURL(rawURL)
	if err != nil {
		return nil, collyx.RequestID(rawURL, body), err
	}
	return u, collyx.RequestID(u.String(), body), nil
}

// ParseRequest reads a request as Colly's queue stores it (the bytes a
// queue.Storage's AddRequest is given): the URL Colly will request and
// its ID (Identify). It fails where Colly would drop the entry (not JSON
// Colly loads, no URL, a URL or method Colly cannot send), so a queue
// never takes one. Its errors read "a queued request …", for the caller
// to prefix.
func ParseRequest(b []byte) (u string, id uint64, err error) { return collyx.ParseRequest(b) }
