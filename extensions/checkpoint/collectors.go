package checkpoint

// This file names the collectors registered with the checkpoint, so that
// each saved URL resumes on the collector that asked for it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
)

// ownerField is the field the checkpoint adds, last, to the JSON of a
// saved request (Colly's UnmarshalRequest ignores it): the name of the
// collector that asked for the URL, "" for one not registered with the
// checkpoint. A request saved without it (by an earlier build, or one no
// collector made: a URL handed to the breaker's NotVisited, one added to
// Colly's queue) is the frontier's: Resume's collector, or the queue's.
const ownerField = `,"BreakwaterCollector":`

// maxNameLen is the longest name Name takes.
const maxNameLen = 64

// collectors is the registry, replaced whole on a change (registrations
// are few; every new URL reads it).
type collectors struct {
	byColl map[*colly.Collector]*named
	byName map[string]*named
	wanted map[*colly.Collector]string // Name, before Register
	adopt  *named                      // Adopt's: it takes the URLs of unregistered collectors
}

// named is a registered collector.
type named struct {
	c    *colly.Collector
	name string
	tail []byte // ownerField, the name as JSON, '}'
}

// ownerTail is what ends a saved request of owner name.
func ownerTail(name string) []byte {
	q, _ := json.Marshal(name) // a string: cannot fail
	return append(append([]byte(ownerField), q...), '}')
}

// unregisteredTail ends a request of a collector not registered here.
var unregisteredTail = ownerTail("")

// change replaces the registry with f's changes to a copy of it.
func (cp *Checkpoint) change(f func(*collectors) error) error {
	cp.cmu.Lock()
	defer cp.cmu.Unlock()
	old := cp.colls.Load()
	r := &collectors{byColl: maps.Clone(old.byColl), byName: maps.Clone(old.byName), wanted: maps.Clone(old.wanted), adopt: old.adopt}
	if err := f(r); err != nil {
		return err
	}
	cp.colls.Store(r)
	return nil
}

// Name gives c a name of its own on this checkpoint, for Register (or
// breakwater.Use) to register it under instead of its place in the order
// of registration. The URLs a collector asks for are saved with its name
// and resume on the collector registered under that name, so a program
// that does not build its collectors in the same order every run names
// them. A name is 1 to 64 letters, digits, '-', '_' or '.', not only
// digits (those are the order's), and one collector's.
func (cp *Checkpoint) Name(c *colly.Collector, name string) error {
	if c == nil {
		return errors.New("checkpoint: Name: nil collector")
	}
	if err := validName(name); err != nil {
		return err
	}
	return cp.change(func(r *collectors) error {
		if n, ok := r.byColl[c]; ok {
			if n.name == name {
				return nil
			}
			return fmt.Errorf("checkpoint: Name(%q): the collector is registered already, as %q; name it before Register (or breakwater.Use)", name, n.name)
		}
		if n, ok := r.byName[name]; ok && n.c != c {
			return fmt.Errorf("checkpoint: Name(%q): another collector is registered under that name; give each its own", name)
		}
		for o, w := range r.wanted {
			if w == name && o != c {
				return fmt.Errorf("checkpoint: Name(%q): another collector has that name; give each its own", name)
			}
		}
		r.wanted[c] = name
		return nil
	})
}

func validName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("checkpoint: Name(%q): a name is 1 to %d characters", name, maxNameLen)
	}
	digits := true
	for _, ch := range name {
		switch {
		case ch >= '0' && ch <= '9':
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch == '-', ch == '_', ch == '.':
			digits = false
		default:
			return fmt.Errorf("checkpoint: Name(%q): %q is not a letter, digit, '-', '_' or '.'", name, ch)
		}
	}
	if digits {
		return fmt.Errorf("checkpoint: Name(%q): names of digits only are the order of registration; give a name with a letter in it", name)
	}
	return nil
}

// enroll registers c under its name, and reports false if it already was.
func (cp *Checkpoint) enroll(c *colly.Collector) bool {
	added := false
	_ = cp.change(func(r *collectors) error {
		if _, ok := r.byColl[c]; ok {
			return nil
		}
		name, ok := r.wanted[c]
		if !ok {
			name = strconv.Itoa(len(r.byColl) + 1)
		}
		delete(r.wanted, c)
		n := &named{c: c, name: name, tail: ownerTail(name)}
		r.byColl[c], r.byName[name], added = n, n, true
		return nil
	})
	return added
}

// Adopt hands c the URLs that collectors not registered with the
// checkpoint (a Clone() nobody registered) asked for in earlier runs and
// left unfinished: Resume (or the queue) issues them on c, which must be
// registered, and from then on they are c's. No run can tell which
// collector they need, so the program says: register the clone whose URLs
// they are, Adopt it once, before Resume. Without it they are never
// issued and the run does not end complete.
func (cp *Checkpoint) Adopt(c *colly.Collector) error {
	return cp.change(func(r *collectors) error {
		n, ok := r.byColl[c]
		if !ok {
			return errors.New("checkpoint: Adopt: the collector is not registered with the checkpoint; register it first (breakwater.Use(clone, ...) or cp.Register(clone))")
		}
		r.adopt = n
		return nil
	})
}

// ownerOf returns the name of the collector a saved request belongs to,
// and false for one saved without it (the frontier's).
func ownerOf(req []byte) (string, bool) {
	i := bytes.LastIndex(req, []byte(ownerField))
	if i < 0 || len(req) == 0 || req[len(req)-1] != '}' {
		return "", false
	}
	var name string
	if json.Unmarshal(req[i+len(ownerField):len(req)-1], &name) != nil {
		return "", false // the field is not ours, last: a Ctx key of the same name
	}
	return name, true
}

// withTail ends req, a marshalled request, with tail instead of its '}'.
func withTail(req, tail []byte) []byte {
	if len(req) == 0 || req[len(req)-1] != '}' {
		return req
	}
	return append(req[:len(req)-1], tail...)
}

// tailFor is the tail a new record's request of r gets: its collector's
// name, or unregistered. A bare request (the breaker's transport gated it,
// no callback of a registered collector saw it) is an unregistered
// collector's, but for robots.txt; another that no collector made (a URL
// handed to NotVisited) gets none: it is the frontier's.
func (cp *Checkpoint) tailFor(r *colly.Request, bare bool) []byte {
	c := collyx.CollectorOf(r)
	if c == nil && (!bare || r.URL == nil || r.URL.Path == "/robots.txt") {
		return nil
	}
	if n, ok := cp.colls.Load().byColl[c]; ok && c != nil {
		return n.tail
	}
	if cp.warnedUnregistered.CompareAndSwap(false, true) {
		cp.opt.Logger.Warn().Str("event", "checkpoint_unregistered_collector").Str("url", r.URL.String()).
			Msg("checkpoint: a collector not registered with the checkpoint (a Clone()?) asks for URLs; those it leaves unfinished cannot be resumed on it: register every clone (breakwater.Use(clone, ...) or cp.Register(clone)) before its first request")
	}
	return unregisteredTail
}

// ownerTailOf is the tail a record already saved keeps for r's request:
// its owner's, but for a URL of an unregistered collector that a
// registered one now asks for (Adopt), which becomes that one's.
func (cp *Checkpoint) ownerTailOf(saved []byte, r *colly.Request) []byte {
	name, ok := ownerOf(saved)
	if !ok {
		return nil
	}
	if name == "" {
		if n, reg := cp.colls.Load().byColl[collyx.CollectorOf(r)]; reg {
			return n.tail
		}
		return unregisteredTail
	}
	return ownerTail(name)
}

// resumer returns the collector to issue a saved request on: its owner's,
// or Adopt's for an unregistered one's; nil, with the owner's name, when
// none in this run may take it. owned is false for a request saved with
// no owner: the frontier's.
func (cp *Checkpoint) resumer(req []byte) (c *colly.Collector, owner string, owned bool) {
	name, ok := ownerOf(req)
	if !ok {
		return nil, "", false
	}
	r := cp.colls.Load()
	if name == "" {
		if r.adopt != nil {
			return r.adopt.c, "", true
		}
		return nil, "", true
	}
	if n, ok := r.byName[name]; ok {
		return n.c, name, true
	}
	return nil, name, true
}
