package validate

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// refDiag is the diagnosis as it was before domains were compacted: every
// domain's record kept whole. The compacted diagnosis must decide as it
// does.
type refDiag struct {
	after   int
	domains map[string]*refDomain
}

type refDomain struct {
	valid  int
	sizes  [recentSizes]int
	nSizes int
	streak []Verdict
	broken *BrokenDomain
}

func (d *refDiag) page(v Verdict) *BrokenDomain {
	dd := d.domains[v.Domain]
	if dd == nil {
		dd = &refDomain{}
		d.domains[v.Domain] = dd
	}
	full := true
	if dd.nSizes > 0 {
		s := slices.Clone(dd.sizes[:dd.nSizes])
		slices.Sort(s)
		full = float64(v.Bytes) >= shrinkRatio*float64(s[len(s)/2])
	}
	switch {
	case v.Valid():
		dd.sizes[dd.valid%recentSizes] = v.Bytes
		dd.valid++
		dd.nSizes = min(dd.nSizes+1, recentSizes)
		dd.streak = dd.streak[:0]
	case v.structureOnly() && full:
		if dd.broken != nil {
			return nil
		}
		dd.streak = append(dd.streak, v)
		if len(dd.streak) >= d.after {
			b := &BrokenDomain{Domain: v.Domain, Pages: slices.Clone(dd.streak), ValidBefore: dd.valid}
			for _, e := range b.Pages {
				for _, r := range e.Reasons {
					if !slices.Contains(b.Selectors, r.Subject) {
						b.Selectors = append(b.Selectors, r.Subject)
					}
				}
			}
			dd.broken = b
			dd.streak = nil
			return b
		}
	default:
		dd.streak = dd.streak[:0]
	}
	return nil
}

func (d *refDiag) degraded(domain string) {
	if dd := d.domains[domain]; dd != nil {
		dd.streak = dd.streak[:0]
	}
}

// TestCompactedDiagnosisDecidesAsTheWholeOne: random runs of valid,
// shrunken, structure-failing, status-failing and degraded pages over a
// few domains give the same diagnoses, at the same pages, with the same
// evidence, and the same valid count, as keeping every record whole.
func TestCompactedDiagnosisDecidesAsTheWholeOne(t *testing.T) {
	missing := []Reason{{Kind: KindStructure, Subject: "h1.title", Text: `missing selector "h1.title"`}}
	other := []Reason{{Kind: KindStructure, Subject: ".price", Text: `missing selector ".price"`}}
	status := []Reason{{Kind: KindStatus, Text: "status 404"}}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 15))
		after := 1 + r.IntN(4)
		got, want := newDiagnosis(after), &refDiag{after: after, domains: map[string]*refDomain{}}
		for i := range 300 {
			dom := fmt.Sprintf("shop-%d.test", r.IntN(4))
			if r.IntN(8) == 0 {
				got.degraded(dom)
				want.degraded(dom)
				continue
			}
			v := Verdict{URL: fmt.Sprintf("http://%s/p/%d", dom, i), Domain: dom, Status: 200, Bytes: 1000 + r.IntN(40000)}
			switch r.IntN(6) {
			case 0:
				v.Reasons = missing
			case 1:
				v.Reasons = other
			case 2:
				v.Reasons, v.Status = status, 404
			case 3:
				v.Bytes = r.IntN(1 << 20) // any size, far over or under the median
			}
			if g, w := got.page(v), want.page(v); !reflect.DeepEqual(g, w) {
				t.Fatalf("seed %d page %d (%s): diagnosed %+v, want %+v", seed, i, dom, g, w)
			}
		}
		var valid int64
		var broken []BrokenDomain
		for _, dd := range want.domains {
			valid += int64(dd.valid)
			if dd.broken != nil {
				broken = append(broken, *dd.broken)
			}
		}
		slices.SortFunc(broken, func(a, b BrokenDomain) int {
			if a.Domain < b.Domain {
				return -1
			}
			return 1
		})
		if g := got.valid.Load(); g != valid {
			t.Fatalf("seed %d: %d valid pages, want %d", seed, g, valid)
		}
		if g := got.broken(); !reflect.DeepEqual(g, broken) {
			t.Fatalf("seed %d: broken %+v, want %+v", seed, g, broken)
		}
	}
}
