package validate

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"weak"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
)

// page is the scoring state of one response. Status, size and body checks
// are scored when the body arrives; the structure checks collect hits from
// Colly's OnHTML callbacks; the verdict is final once every OnHTML callback
// ran. It holds no pointer to the request (see table).
type page struct {
	rule     *rule
	base     Verdict  // without reasons
	early    []Reason // status and size
	bodies   []Reason // failed body checks
	unparsed bool     // Colly did not parse the body: no structure check

	mu      sync.Mutex
	hit     []bool  // by selector index
	seen    []int   // by selector index: elements matched so far
	elemErr []error // by rule element index
	final   bool
	verdict Verdict
}

// newPage scores what is known once the body is read: status, size
// (floor and truncation against maxBody, Colly's MaxBodySize; 0 = no
// limit) and the body checks.
func newPage(rules []*rule, r *colly.Response, maxBody int) *page {
	u := r.Request.URL.String()
	ru := match(rules, u)
	p := &page{rule: ru, base: Verdict{URL: u, Domain: strings.ToLower(r.Request.URL.Host), Rule: ru.pattern,
		Status: r.StatusCode, Bytes: len(r.Body)}}
	if ru.parse {
		p.hit = make([]bool, len(ru.watches))
		if len(ru.watches) > 1 {
			p.seen = make([]int, len(ru.watches))
		}
		p.elemErr = make([]error, len(ru.elements))
	}
	if r.StatusCode < 200 || r.StatusCode > 299 {
		p.early = append(p.early, Reason{Kind: KindStatus, Text: "status " + strconv.Itoa(r.StatusCode)})
	}
	if truncated(r, maxBody) {
		p.early = append(p.early, Reason{Kind: KindSize, Text: fmt.Sprintf("truncated: body stopped at Colly's MaxBodySize (%d bytes)", maxBody)})
	}
	if len(r.Body) < ru.floor {
		p.early = append(p.early, Reason{Kind: KindSize, Text: fmt.Sprintf("below floor: %d < %d bytes", len(r.Body), ru.floor)})
	}
	for _, b := range ru.bodies {
		if err := b.check(r); err != nil {
			p.bodies = append(p.bodies, Reason{Kind: KindStructure, Subject: b.name, Text: b.name + ": " + err.Error()})
		}
	}
	p.early = slices.Clip(p.early)
	return p
}

// truncated reports a body cut by Colly's MaxBodySize. Colly gives no
// signal for it; the body is exactly MaxBodySize long. A body of exactly
// that length whose uncompressed Content-Length says so is complete.
func truncated(r *colly.Response, maxBody int) bool {
	if maxBody <= 0 || len(r.Body) != maxBody {
		return false
	}
	if r.Headers != nil && r.Headers.Get("Content-Encoding") == "" {
		if n, err := strconv.Atoi(r.Headers.Get("Content-Length")); err == nil && n == maxBody {
			return false
		}
	}
	return true
}

// next returns the index of the next element matching selector sel.
func (p *page) next(sel int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.seen[sel]
	p.seen[sel]++
	return i
}

// found records that the selector sel, which no Element check names,
// matched.
func (p *page) found(sel int) {
	p.mu.Lock()
	p.hit[sel] = true
	p.mu.Unlock()
}

// has reports whether the selector sel matched.
func (p *page) has(sel int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hit[sel]
}

// onElement records that the selector sel matched e, and runs the rule's
// element checks on sel that have not failed yet. User code runs outside
// the lock, so it may call VerdictOf.
func (p *page) onElement(sel int, e *colly.HTMLElement) {
	if !p.rule.watches[sel] {
		return
	}
	p.mu.Lock()
	p.hit[sel] = true
	p.mu.Unlock()
	for k, el := range p.rule.elements {
		if el.sel != sel {
			continue
		}
		p.mu.Lock()
		failed := p.elemErr[k] != nil
		p.mu.Unlock()
		if failed {
			continue
		}
		if err := el.check(e); err != nil {
			p.mu.Lock()
			p.elemErr[k] = err
			p.mu.Unlock()
		}
	}
}

// current returns the verdict from what is known now: final once every
// OnHTML callback ran.
func (p *page) current() Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final {
		return p.verdict
	}
	return p.compute()
}

// finish fixes the verdict. It reports whether this call fixed it, so the
// caller records each page once in the diagnosis.
func (p *page) finish() (Verdict, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final {
		return p.verdict, false
	}
	p.verdict = p.compute()
	p.final = true
	return p.verdict, true
}

// compute needs p.mu. Reasons come in check order: status, size,
// structure (Require, then Element, then Body checks); a selector missing
// for several checks is reported once. No reason leaves Reasons nil.
func (p *page) compute() Verdict {
	v := p.base
	reasons := p.early // appended to only through a fresh slice (cap == len)
	missing := func(selector string) {
		if !slices.ContainsFunc(reasons, func(r Reason) bool { return r.Kind == KindStructure && r.Subject == selector }) {
			reasons = append(reasons, Reason{Kind: KindStructure, Subject: selector, Text: fmt.Sprintf("missing selector %q", selector)})
		}
	}
	for n, j := range p.rule.requireIdx {
		if !p.unparsed && !p.hit[j] {
			missing(p.rule.require[n])
		}
	}
	for k, e := range p.rule.elements {
		switch {
		case p.unparsed: // the selectors were not looked for
		case !p.hit[e.sel]:
			missing(e.selector)
		case p.elemErr[k] != nil:
			reasons = append(reasons, Reason{Kind: KindStructure, Subject: e.selector, Text: e.selector + ": " + p.elemErr[k].Error()})
		}
	}
	v.Reasons = append(reasons, p.bodies...)
	return v
}

// table holds the per-request scoring state by *colly.Request address,
// with a weak pointer: it never keeps a request alive (a page holds none).
// Entries of requests gone are swept when a shard doubles and after GCs.
type table struct {
	once   sync.Once // starts the sweeps after garbage collections
	shards [tableShards]tableShard
}

// tableShards is how many locks the table is split under, a power of two.
const tableShards = 64

type tableShard struct {
	mu      sync.Mutex
	m       map[uintptr]slot
	sweepAt int      // the shard's size that triggers its next sweep
	_       [40]byte // a cache line of its own
}

// shard is the shard of the request at address k: a multiplicative hash,
// since allocation leaves the low bits of addresses alike.
func (t *table) shard(k uintptr) *tableShard {
	return &t.shards[(uint64(k)*0x9E3779B97F4A7C15)>>(64-6)]
}

// gcSentinel is garbage at once, so its cleanup runs after the next GC (its
// pointer keeps it from being a tiny allocation, never cleaned up).
type gcSentinel struct{ _ *byte }

// sweepAfterGC sweeps t after the next garbage collection, and again after
// every one after it, for as long as t is in use.
func sweepAfterGC(t weak.Pointer[table]) {
	runtime.AddCleanup(&gcSentinel{}, func(t weak.Pointer[table]) {
		tt := t.Value()
		if tt == nil {
			return // the validator is gone
		}
		for i := range tt.shards {
			sh := &tt.shards[i]
			sh.mu.Lock()
			sh.sweepLocked()
			sh.mu.Unlock()
		}
		sweepAfterGC(t)
	}, t)
}

type slot struct {
	req weak.Pointer[colly.Request]
	p   *page
}

// minSweep is the size below which a shard is never swept.
const minSweep = 1024 / tableShards

// get returns the state of req, or nil.
func (t *table) get(req *colly.Request) *page {
	if req == nil {
		return nil
	}
	k := collyx.RequestAddr(req)
	sh := t.shard(k)
	sh.mu.Lock()
	s, ok := sh.m[k]
	sh.mu.Unlock()
	if !ok || s.req.Value() != req {
		return nil
	}
	return s.p
}

// put stores p for req unless req already has a state, and returns the
// state that is stored.
func (t *table) put(req *colly.Request, p *page) *page {
	t.once.Do(func() { sweepAfterGC(weak.Make(t)) })
	k := collyx.RequestAddr(req)
	sh := t.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if s, ok := sh.m[k]; ok && s.req.Value() == req {
		return s.p
	}
	if sh.m == nil {
		sh.m = make(map[uintptr]slot)
	}
	if len(sh.m) >= max(sh.sweepAt, minSweep) {
		sh.sweepLocked()
		sh.sweepAt = 2 * len(sh.m)
	}
	sh.m[k] = slot{req: weak.Make(req), p: p}
	return p
}

// sweepLocked deletes the shard's entries whose request is gone.
func (sh *tableShard) sweepLocked() {
	for k, s := range sh.m {
		if s.req.Value() == nil {
			delete(sh.m, k)
		}
	}
}
