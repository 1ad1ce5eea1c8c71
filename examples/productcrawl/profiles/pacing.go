package profiles

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// keyPacing is the top-level block of per-domain pacing.
const keyPacing = "pacing"

// DomainPacing is one entry of pacing: the hosts matching Pattern keep at
// least MinGap between the starts of two requests (breaker.SetMinGap),
// whatever the crawl-wide pacing says.
//
//	pacing:
//	  shop.example.com: {min_gap_ms: 500}
//	  .example.org: {min_gap_seconds: 2}
type DomainPacing struct {
	// Pattern is an exact host or a suffix starting with a dot, as in
	// domains, lower-cased.
	Pattern string
	MinGap  time.Duration
	// Line is where the file gives it.
	Line int
}

// pacingFields are the settings of a pacing entry: one gap, in either unit.
var pacingFields = map[string]*field{
	"min_gap_ms":      {key: "min_gap_ms", goName: "MinGap", kind: millis},
	"min_gap_seconds": {key: "min_gap_seconds", goName: "MinGap", kind: seconds},
}

func (p *parser) pacing(doc *document, n *yaml.Node) {
	first := map[string]int{}
	p.mapping(n, keyPacing, "a mapping of host patterns to their pace", func(pattern string, k, v *yaml.Node) {
		path := join(keyPacing, pattern)
		if why := checkPattern(pattern); why != "" {
			p.fail(k, keyPacing, pattern, why)
			return
		}
		dp := DomainPacing{Pattern: strings.ToLower(pattern), Line: k.Line}
		if line, dup := first[dp.Pattern]; dup {
			p.fail(k, path, "", "the same pattern as line "+strconv.Itoa(line)+" (patterns ignore case); keep one")
			return
		}
		first[dp.Pattern] = k.Line
		before, set := len(p.errs), false
		p.mapping(v, path, "a mapping with min_gap_ms or min_gap_seconds", func(key string, fk, fv *yaml.Node) {
			fpath := join(path, key)
			f, ok := pacingFields[key]
			switch {
			case !ok:
				p.fail(fk, fpath, "", "unknown field"+suggest(key, []string{"min_gap_ms", "min_gap_seconds"}))
				return
			case set:
				p.fail(fk, fpath, "", "the gap is given twice: keep min_gap_ms or min_gap_seconds")
				return
			}
			val, ok := p.scalar(fv, fpath, f)
			if !ok {
				return
			}
			if val.d < 0 {
				p.fail(fv, fpath, fv.Value, "must be 0 or more")
				return
			}
			dp.MinGap, set = val.d, true
		})
		if len(p.errs) > before {
			return
		}
		if !set {
			p.fail(k, path, "", "no setting: give min_gap_ms or min_gap_seconds")
			return
		}
		doc.pacing = append(doc.pacing, dp)
	})
}

// Pacing returns the per-domain pacing entries, in the file's order.
func (s *Set) Pacing() []DomainPacing {
	if s == nil {
		return nil
	}
	out := make([]DomainPacing, len(s.pacing))
	copy(out, s.pacing)
	return out
}

// MinGap returns the least gap the file gives host (a URL's host, with its
// port if it has one), and whether it gives one. As for domains, the most
// specific pattern wins: the exact host, then the longest suffix.
func (s *Set) MinGap(host string) (time.Duration, bool) {
	if s == nil {
		return 0, false
	}
	host = strings.ToLower(host)
	name := host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		name = host[:i]
	}
	best, gap, found := -1, time.Duration(0), false
	for _, dp := range s.pacing {
		switch {
		case dp.Pattern == host:
			return dp.MinGap, true
		case strings.HasPrefix(dp.Pattern, ".") && (name == dp.Pattern[1:] || strings.HasSuffix(name, dp.Pattern)) && len(dp.Pattern) > best:
			best, gap, found = len(dp.Pattern), dp.MinGap, true
		}
	}
	return gap, found
}
