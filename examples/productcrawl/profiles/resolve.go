package profiles

import (
	"errors"
	"github.com/breakwater-crawl/breakwater/circuit"
	"sort"
	"strconv"
	"strings"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// status of a profile during resolution.
type status uint8

const (
	unresolved status = iota
	resolving         // on the extends chain being followed: seeing it again is a cycle
	resolved
	broken // an error was reported; whatever depends on it stays silent
)

// resolver turns the profiles as written into breaker.Profiles: each
// starts from what it extends (or its built-in namesake, or nothing), takes
// the fields it sets, and must pass breaker.Profile.Validate.
type resolver struct {
	p      *parser
	doc    *document
	state  map[string]status
	out    map[string]breaker.Profile
	origin map[string]string // what each profile started from, for messages
}

// lookup finds the profile a reference names: one of the file's, or a
// built-in. found is false for a name nobody defines; ok is false when
// the profile exists but is broken (its error is already reported).
func (r *resolver) lookup(name string) (p breaker.Profile, found, ok bool) {
	if _, inFile := r.doc.byName[name]; inFile {
		p, ok = r.get(name)
		return p, true, ok
	}
	p, builtin := builtins()[name]
	if !builtin && r.doc.unreadable {
		return p, true, false // reported already: breaker_profiles could not be read
	}
	return p, builtin, builtin
}

func (r *resolver) get(name string) (breaker.Profile, bool) {
	rp := r.doc.byName[name]
	switch r.state[name] {
	case resolved:
		return r.out[name], true
	case broken:
		return breaker.Profile{}, false
	case resolving:
		return breaker.Profile{}, false // the cycle is reported where it closes
	}
	r.state[name] = resolving
	p, ok := r.build(rp)
	if !ok {
		r.state[name] = broken
		return breaker.Profile{}, false
	}
	r.state[name], r.out[name] = resolved, p
	return p, true
}

func (r *resolver) build(rp *rawProfile) (breaker.Profile, bool) {
	if rp.bad {
		return breaker.Profile{}, false
	}
	path := join(keyProfiles, rp.name)
	builtin, isBuiltin := builtins()[rp.name]
	var base breaker.Profile
	switch ext := rp.extends; {
	case ext == nil && isBuiltin:
		base, r.origin[rp.name] = builtin, "the built-in "+rp.name
	case ext == nil:
		if missing := missingRequired(rp); len(missing) > 0 {
			r.p.fail(rp.node, path, "", "a new profile starts from nothing and needs "+strings.Join(missing, ", ")+
				"; or give extends: <profile> to start from another (built in: conservative, standard, aggressive)")
			return breaker.Profile{}, false
		}
		r.origin[rp.name] = ""
	case ext.name == rp.name && isBuiltin:
		base, r.origin[rp.name] = builtin, "the built-in "+rp.name
	case ext.name == rp.name:
		r.p.fail(ext.node, ext.path, ext.name, "a profile cannot extend itself")
		return breaker.Profile{}, false
	default:
		if r.state[ext.name] == resolving {
			r.p.fail(ext.node, ext.path, ext.name, "extends forms a cycle: "+r.cycle(rp.name))
			return breaker.Profile{}, false
		}
		p, found, ok := r.lookup(ext.name)
		if !found {
			r.p.fail(ext.node, ext.path, ext.name, "no profile of that name"+r.known())
			return breaker.Profile{}, false
		}
		if !ok {
			return breaker.Profile{}, false
		}
		base, r.origin[rp.name] = p, ext.name
	}
	prof := base
	for _, f := range fields {
		if s, ok := rp.set[f.key]; ok {
			f.set(&prof, s.v)
		}
	}
	prof.Name = rp.name
	if err := prof.Validate(); err != nil {
		r.invalid(rp, prof, err)
		return breaker.Profile{}, false
	}
	return prof, true
}

// cycle writes the extends chain from name back to name.
func (r *resolver) cycle(name string) string {
	chain := []string{name}
	for cur := name; ; {
		ext := r.doc.byName[cur].extends
		chain = append(chain, ext.name)
		if ext.name == name || r.doc.byName[ext.name] == nil || len(chain) > len(r.doc.profiles)+1 {
			break
		}
		cur = ext.name
	}
	return strings.Join(chain, " → ")
}

func missingRequired(rp *rawProfile) []string {
	var missing []string
	for _, f := range fields {
		if _, ok := rp.set[f.key]; f.required && !ok {
			missing = append(missing, f.key)
		}
	}
	return missing
}

// invalid reports a Validate failure at the line that set the field, or,
// for a value the profile did not set, at the line of the field it did set
// that the rule involves, else at the profile's name.
func (r *resolver) invalid(rp *rawProfile, prof breaker.Profile, err error) {
	path := join(keyProfiles, rp.name)
	var pe *circuit.ProfileError
	if !errors.As(err, &pe) {
		r.p.errs = append(r.p.errs, &Error{File: r.p.file, Line: rp.node.Line, Path: path, Reason: err.Error(), Err: err})
		return
	}
	reason := goToKey.Replace(pe.Reason)
	f := byGoName[pe.Field]
	if f == nil { // a rule this package does not know the field of
		r.p.errs = append(r.p.errs, &Error{File: r.p.file, Line: rp.node.Line, Path: path,
			Reason: pe.Field + ": " + reason, Err: err})
		return
	}
	e := &Error{File: r.p.file, Line: rp.node.Line, Path: join(path, f.key), Reason: reason, Err: err}
	if s, ok := rp.set[f.key]; ok {
		e.Line, e.Value = s.node.Line, deref(s.node).Value
	} else {
		e.Value = f.format(f.get(prof))
		if from := r.origin[rp.name]; from != "" {
			e.Reason += " (" + f.key + " is not set here: it comes from " + from + ")"
		} else {
			e.Reason += " (" + f.key + " is not set here, so it is off)"
		}
		if rel := byGoName[related[f.goName]]; rel != nil {
			if s, ok := rp.set[rel.key]; ok {
				e.Line = s.node.Line
			}
		}
	}
	r.p.errs = append(r.p.errs, e)
}

// known lists the profile names a reference may use.
func (r *resolver) known() string {
	var names []string
	for _, rp := range r.doc.profiles {
		if _, b := builtins()[rp.name]; !b {
			names = append(names, rp.name)
		}
	}
	s := " (built in: conservative, standard, aggressive"
	if len(names) > 0 {
		s += "; defined here: " + strings.Join(names, ", ")
	}
	return s + ")"
}

// assign resolves the default and the domain assignments.
func (r *resolver) assign(set *Set) {
	if ref := r.doc.def; ref != nil {
		p, found, ok := r.lookup(ref.name)
		switch {
		case !found:
			r.p.fail(ref.node, ref.path, ref.name, "no profile of that name"+r.known())
		case ok:
			set.def, set.hasDefault = p, true
		}
	}
	first := map[string]int{}
	for _, d := range r.doc.domains {
		path := join(keyDomains, d.pattern)
		if why := checkPattern(d.pattern); why != "" {
			r.p.fail(d.key, keyDomains, d.pattern, why)
			continue
		}
		pattern := strings.ToLower(d.pattern)
		if line, dup := first[pattern]; dup {
			r.p.fail(d.key, path, "", "the same pattern as line "+strconv.Itoa(line)+" (patterns ignore case); keep one")
			continue
		}
		first[pattern] = d.key.Line
		p, found, ok := r.lookup(d.ref.name)
		switch {
		case !found:
			r.p.fail(d.ref.node, d.ref.path, d.ref.name, "no profile of that name"+r.known())
		case ok:
			set.domains = append(set.domains, Assignment{Pattern: pattern, Profile: p, Line: d.key.Line})
		}
	}
}

// sortErrors orders errors by line, keeping the order of discovery within
// a line.
func sortErrors(errs []*Error) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
}
