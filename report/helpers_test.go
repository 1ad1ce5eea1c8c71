package report_test

import (
	"strings"

	"github.com/breakwater-crawl/breakwater/report"
)

// domainOf returns r's line for host, normalised as the breaker's domain
// keys are, and false if r has none.
func domainOf(r report.Report, host string) (report.Domain, bool) {
	host = strings.ToLower(host)
	for _, d := range r.Domains {
		if d.Domain == host {
			return d, true
		}
	}
	return report.Domain{}, false
}
