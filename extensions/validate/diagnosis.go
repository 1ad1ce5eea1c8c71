package validate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/breakwater-crawl/breakwater/internal/packmap"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/gocolly/colly/v2"
)

// ErrSelectorBroken matches the error of every BrokenDomain under errors.Is.
var ErrSelectorBroken = errors.New("selector_broken")

// BrokenDomain is the diagnosis that a domain's pages arrive whole and
// healthy but without the structure the rules require: the template changed
// or the selector is wrong, which needs a human (exit 1), not a retry.
// Config.BrokenAfter pages in a row that are 2xx, above the floor, not
// truncated, at least half the median size of the domain's recent valid
// pages and fail only the structure check make it; a valid page or a
// failure of the target (5xx, timeout, a cut or shrunken body) starts the
// count again. It stands for the rest of the run. Its slices are shared;
// treat them as read-only.
type BrokenDomain struct {
	Domain    string    // the host with its port, lower-case
	Selectors []string  // the selectors (or Body check names) that failed, first seen first
	Pages     []Verdict // the verdicts of the pages in a row that made the diagnosis
	// ValidBefore is how many valid pages the domain served first: 0
	// suggests a wrong selector, more a template changed during the run.
	ValidBefore int
}

// Err returns an error wrapping ErrSelectorBroken that names the domain
// and the selectors.
func (b BrokenDomain) Err() error {
	return fmt.Errorf("%w: %s: %s missing on %d full-size 2xx pages in a row (%d valid before): the page template changed or the selector is wrong",
		ErrSelectorBroken, b.Domain, quoteAll(b.Selectors), len(b.Pages), b.ValidBefore)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

const (
	// shrinkRatio: a page smaller than this share of the median valid
	// page of its domain is not full-size (a degrading origin).
	shrinkRatio = 0.5
	// recentSizes is how many valid page sizes per domain the median is over.
	recentSizes = 8
)

// diagnosis tells a broken selector from a degrading target, per domain. A
// domain with no evidence under way is kept compact (encode), so that a
// broad crawl keeps a few bytes per domain.
type diagnosis struct {
	after int

	valid  atomic.Int64          // valid pages of every domain
	seed   maphash.Seed          // a domain's shard
	idSeed maphash.Seed          // a domain's compact record (recordID): not seed, so two domains share a record only if both their ids and their shards collide
	shards [diagShards]diagShard // the domains, by a hash of the name: no lock for every page of every domain
}

// diagShards is how many locks the domains are spread over.
const diagShards = 64

// diagShard is the domains of one shard.
type diagShard struct {
	mu    sync.Mutex
	whole map[string]*domainDiag // domains with evidence under way, or diagnosed
	// compact is every other domain with a valid page, by recordID, not by
	// name (no copy of the name per domain): its record (encode) in the
	// word itself if it fits (inline), else the word says it is in long,
	// keyed by the id's 8 bytes. No pointer per domain for the collector
	// to mark.
	compact map[uint64]uint64
	long    packmap.Map
}

// recordID is what a domain's compact record is found by: a 64-bit hash of
// its name, with a seed of the run's own (idSeed) that is not the shard's.
// Two domains share a record only if both their shard and their id
// collide: a one-in-2⁶⁴ (×64 shards) chance for any two domains, some
// n²/2⁷¹ over a crawl of n — 4·10⁻¹⁰ for a million domains. And a shared
// record only mixes the two domains' valid counts and recent sizes: it can
// make a shrunken page look full-size, never start a run of evidence, so a
// false diagnosis needs that chance and a target degrading with shrunken
// pages that fail only structure, BrokenAfter times in a row.
type recordID = uint64

func (d *diagnosis) recordID(domain string) recordID { return maphash.String(d.idSeed, domain) }

// A compact record in one word: its bytes from the lowest, and their
// count in the top byte (1–7; a record is never empty), or inLong.
const (
	inlineMax = 7
	inLong    = uint64(0xFF) << 56
)

// get returns the compact record of id, and whether there is one.
func (sh *diagShard) get(id recordID) (string, bool) {
	w, ok := sh.compact[id]
	switch {
	case !ok:
		return "", false
	case w == inLong:
		return sh.long.Get(longKey(id))
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], w)
	return string(b[:w>>56]), true
}

// set makes rec, not empty, the compact record of id.
func (sh *diagShard) set(id recordID, rec string) {
	old, had := sh.compact[id]
	if len(rec) > inlineMax {
		sh.compact[id] = inLong
		sh.long.Set(longKey(id), rec)
		return
	}
	if had && old == inLong {
		sh.long.Delete(longKey(id))
	}
	var b [8]byte
	copy(b[:], rec)
	sh.compact[id] = binary.LittleEndian.Uint64(b[:]) | uint64(len(rec))<<56
}

// drop removes id's compact record, if any.
func (sh *diagShard) drop(id recordID) {
	if w, ok := sh.compact[id]; ok {
		if w == inLong {
			sh.long.Delete(longKey(id))
		}
		delete(sh.compact, id)
	}
}

// longKey is id as long's key.
func longKey(id recordID) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], id)
	return string(b[:])
}

type domainDiag struct {
	valid  int
	sizes  [recentSizes]int
	nSizes int
	streak []Verdict // full-size 2xx pages in a row failing only structure
	broken *BrokenDomain
}

func newDiagnosis(after int) *diagnosis {
	d := &diagnosis{after: after, seed: maphash.MakeSeed(), idSeed: maphash.MakeSeed()}
	for i := range d.shards {
		d.shards[i].whole = make(map[string]*domainDiag)
		d.shards[i].compact = make(map[uint64]uint64)
	}
	return d
}

// shard is domain's shard.
func (d *diagnosis) shard(domain string) *diagShard {
	return &d.shards[maphash.String(d.seed, domain)%diagShards]
}

// page records one final verdict. It returns the diagnosis when this page
// completed the evidence for its domain (once per domain), else nil.
func (d *diagnosis) page(v Verdict) *BrokenDomain {
	if v.Valid() {
		d.valid.Add(1)
	}
	sh, id := d.shard(v.Domain), d.recordID(v.Domain)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var local domainDiag
	dd, wasWhole := sh.whole[v.Domain], true
	if dd == nil {
		dd, wasWhole = &local, false
		if rec, ok := sh.get(id); ok {
			dd.decode(rec)
		}
	}
	b := dd.page(v, d.after)
	sh.settle(v.Domain, id, dd, wasWhole)
	return b
}

// settle keeps dd, the record of domain (id) after a page, the way it needs:
// compact while nothing is under way, whole (a copy, unless wasWhole: dd
// is already the one kept) while evidence is under way or once diagnosed.
// sh.mu is held.
func (sh *diagShard) settle(domain string, id recordID, dd *domainDiag, wasWhole bool) {
	if dd.broken != nil || len(dd.streak) > 0 {
		if !wasWhole {
			kept := *dd
			sh.whole[strings.Clone(domain)] = &kept
			sh.drop(id)
		}
		return
	}
	if wasWhole {
		delete(sh.whole, domain)
	}
	if dd.valid == 0 {
		sh.drop(id) // nothing to remember: as if never seen
		return
	}
	sh.set(id, dd.encode())
}

// page is diagnosis.page for one domain's record.
func (dd *domainDiag) page(v Verdict, after int) *BrokenDomain {
	switch {
	case v.Valid():
		dd.sizes[dd.valid%recentSizes] = v.Bytes
		dd.valid++
		dd.nSizes = min(dd.nSizes+1, recentSizes)
		dd.streak = dd.streak[:0]
	case v.structureOnly() && dd.fullSize(v.Bytes):
		if dd.broken != nil {
			return nil
		}
		dd.streak = append(dd.streak, v)
		if len(dd.streak) >= after {
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
	default: // the target's trouble breaks any run of structure evidence
		dd.streak = dd.streak[:0]
	}
	return nil
}

// encode returns the compact record of dd, which has no streak and no
// diagnosis: its valid count, then its recent sizes in ring order, as
// uvarints.
func (dd *domainDiag) encode() string {
	var buf [(1 + recentSizes) * binary.MaxVarintLen64]byte
	b := binary.AppendUvarint(buf[:0], uint64(dd.valid))
	for _, n := range dd.sizes[:dd.nSizes] {
		b = binary.AppendUvarint(b, uint64(n))
	}
	return string(b)
}

// decode makes dd the record encode made rec of.
func (dd *domainDiag) decode(rec string) {
	b := []byte(rec)
	valid, k := binary.Uvarint(b)
	b = b[max(k, 0):]
	dd.valid = int(valid)
	dd.nSizes = min(dd.valid, recentSizes)
	for i := range dd.nSizes {
		n, k := binary.Uvarint(b)
		b = b[max(k, 0):]
		dd.sizes[i] = int(n)
	}
}

// fullSize reports whether n bytes is at least shrinkRatio of the median
// of the domain's recent valid pages, if any.
func (dd *domainDiag) fullSize(n int) bool {
	if dd.nSizes == 0 {
		return true
	}
	s := dd.sizes // a copy, to sort
	m := s[:dd.nSizes]
	slices.Sort(m)
	return float64(n) >= shrinkRatio*float64(m[len(m)/2])
}

// degraded records a failure of the target: it breaks the run of
// structure evidence.
func (d *diagnosis) degraded(domain string) {
	sh := d.shard(domain)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if dd := sh.whole[domain]; dd != nil {
		dd.streak = dd.streak[:0]
		sh.settle(domain, d.recordID(domain), dd, true)
	}
}

// broken returns the diagnosed domains, sorted by name.
func (d *diagnosis) broken() []BrokenDomain {
	var out []BrokenDomain
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		for _, dd := range sh.whole {
			if dd.broken != nil {
				out = append(out, *dd.broken)
			}
		}
		sh.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out
}

// targetFailure reports whether an OnError (status, err) is the target's
// trouble: a 5xx, a timeout, a network or DNS failure, a cut body. 4xx
// and self-inflicted errors (aborts, cancellation, revisits) are not.
func targetFailure(status int, err error) bool {
	if status >= 500 {
		return true
	}
	if status != 0 || err == nil {
		return false
	}
	var visited *colly.AlreadyVisitedError
	if errors.Is(err, colly.ErrAbortedBeforeRequest) || errors.Is(err, colly.ErrAbortedAfterHeaders) ||
		errors.Is(err, context.Canceled) || errors.As(err, &visited) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// Judge reports every domain diagnosed selector_broken as an error (exit 1,
// not 2: a human must look), and counts only pages that passed validation
// as valid, so a crawl of nothing but consent shells ends empty.
func (v *Validator) Judge() outcome.Evidence {
	ev := outcome.Evidence{Valid: v.diag.valid.Load(), Counts: true}
	for _, b := range v.Broken() {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "selector_broken",
			Reason: b.Err().Error(), Domains: []string{b.Domain}})
	}
	return ev
}
