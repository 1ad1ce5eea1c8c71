package main

import (
	"slices"
	"strings"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/storage"
)

// collyHosts returns the hosts Colly may see for an exact host pattern of
// a profiles file ("shop.example:8080", "0x7f.0.0.1:8080", "h:80"),
// other than the pattern itself: its canonical spelling under http and
// under https as storage.Identify gives it, which differ when the port is
// one of theirs (h:80 is h under http, h:80 under https). Deriving hosts
// with net/url alone would name hosts Colly never sends to. Nothing for a
// suffix pattern: those are ASCII DNS names already, which Colly keeps as
// they are.
func collyHosts(pattern string) []string {
	if strings.HasPrefix(pattern, ".") {
		return nil
	}
	var out []string
	for _, scheme := range []string{"http://", "https://"} {
		u, _, err := storage.Identify(scheme+pattern+"/", nil)
		if err != nil || u.Host == "" {
			continue
		}
		if h := strings.ToLower(u.Host); h != pattern && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// profileDomains returns the breaker's Config.Domains of the profiles
// file's domain assignments, each also under the hosts Colly will see for
// it, so "0x7f.0.0.1:8080: fragile" reaches the domain 127.0.0.1:8080. A
// host the file names exactly keeps the profile it is given there.
func profileDomains(set *profiles.Set) map[string]breaker.Profile {
	domains := set.Config().Domains
	for _, a := range set.Domains() {
		for _, h := range collyHosts(a.Pattern) {
			if _, named := domains[h]; !named {
				domains[h] = a.Profile
			}
		}
	}
	return domains
}
