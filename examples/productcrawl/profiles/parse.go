package profiles

import (
	"bytes"
	"errors"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The top-level keys of a profiles file.
const (
	keyProfiles = "breaker_profiles"
	keyDefault  = "default"
	keyDomains  = "domains"
)

// document is a profiles file as written, before any profile is resolved.
type document struct {
	profiles []*rawProfile
	byName   map[string]*rawProfile
	def      *reference // nil when the file names no default
	domains  []rawDomain
	pacing   []DomainPacing
	// unreadable is set when breaker_profiles itself could not be read:
	// then a name nobody defines is not reported again.
	unreadable bool
}

// rawProfile is one entry of breaker_profiles as written.
type rawProfile struct {
	name    string
	node    *yaml.Node // its name, for errors about the whole profile
	extends *reference // nil without extends
	set     map[string]setting
	bad     bool // a field could not be read: its error is reported, the profile is not built
}

// setting is one field a profile sets.
type setting struct {
	node *yaml.Node // the value as written
	v    value
}

// reference is a profile name written in the file (extends, default, a
// domain's profile).
type reference struct {
	name string
	path string
	node *yaml.Node
}

// rawDomain is one entry of domains as written.
type rawDomain struct {
	pattern string // as written
	key     *yaml.Node
	ref     reference
}

// parser reads a profiles file and collects every mistake in it.
type parser struct {
	file string
	errs []*Error
}

func (p *parser) fail(n *yaml.Node, path, val, reason string) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Path: path, Value: val, Reason: reason})
}

// yamlLine finds the line in a syntax error of the YAML library.
var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// parserProblems are the YAML library's parser errors (as opposed to its
// scanner errors). For these it reports the line 0-based: the line before
// the construct the problem is in, or before the problem itself when that
// construct starts on the first line, and no line at all for the first.
var parserProblems = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"did not find expected node content", "did not find expected '-' indicator",
	"did not find expected key", "did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found undefined tag handle", "found duplicate %YAML directive", "found incompatible YAML document",
	"found duplicate %TAG directive",
}

// read decodes data into the document tree, without interpreting it.
func (p *parser) read(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			p.fail(nil, "", "", "the file is empty: want breaker_profiles, and optionally default and domains")
		} else {
			p.syntax(err)
		}
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		p.fail(&next, "", "", "a second YAML document (after ---): a profiles file holds one")
		return nil
	} else if !errors.Is(err, io.EOF) {
		p.syntax(err)
		return nil
	}
	return &root
}

// markedProblem reports whether msg is one of the YAML scanner's problems,
// which carry a position.
func markedProblem(msg string) bool {
	for _, prefix := range []string{"found ", "did not find ", "could not find ", "mapping ", "block sequence "} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

func (p *parser) syntax(err error) {
	msg := err.Error()
	e := &Error{File: p.file, Reason: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: "), Err: err}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Reason = "not valid YAML: " + m[2]
		switch {
		case slices.Contains(parserProblems, m[2]):
			e.Line++ // see parserProblems
			if m[1] != "" {
				e.Reason += " (in what starts here)"
			}
		case m[1] == "" && markedProblem(m[2]):
			e.Line = 1 // the library leaves out a line 1 (0-based 0)
		}
	}
	p.errs = append(p.errs, e)
}

// deref follows YAML aliases (*name) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe names what a node is, for "want X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode:
		return "a document"
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing"
	case "!!str":
		return "the string " + strconv.Quote(n.Value)
	case "!!bool":
		return "a boolean"
	case "!!int", "!!float":
		return "a number"
	}
	return n.ShortTag()
}

// mapping calls each for every key of the mapping n (at path), in order,
// and reports keys that are not plain scalars or are written twice.
func (p *parser) mapping(n *yaml.Node, path, what string, each func(key string, k, v *yaml.Node)) {
	at := n
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.fail(at, path, "", "want "+what+", got "+describe(n))
		return
	}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.fail(k, path, "", "a key must be a plain name, got "+describe(k))
			continue
		}
		kp := join(path, k.Value)
		if k.Value == "<<" {
			p.fail(k, kp, "", "YAML merge keys are not read here: start from another profile with extends: <name>")
			continue
		}
		if line, dup := first[k.Value]; dup {
			p.fail(k, kp, "", "written twice (first at line "+strconv.Itoa(line)+"); keep one")
			continue
		}
		first[k.Value] = k.Line
		each(k.Value, k, v)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// parse interprets the tree: every key known, every value of its kind.
func (p *parser) parse(root *yaml.Node) *document {
	doc := &document{byName: map[string]*rawProfile{}}
	top := root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if deref(top).Kind == yaml.ScalarNode && deref(top).ShortTag() == "!!null" {
		p.fail(top, "", "", "the file is empty: want breaker_profiles, and optionally default and domains")
		return doc
	}
	p.mapping(top, "", "a mapping with breaker_profiles, default and domains", func(key string, k, v *yaml.Node) {
		switch key {
		case keyProfiles:
			p.profiles(doc, v)
		case keyDefault:
			if ref, ok := p.reference(v, keyDefault); ok {
				doc.def = ref
			}
		case keyDomains:
			p.domains(doc, v)
		case keyPacing:
			p.pacing(doc, v)
		default:
			p.fail(k, key, "", "unknown field"+suggest(key, []string{keyProfiles, keyDefault, keyDomains, keyPacing}))
		}
	})
	return doc
}

// profileName is what a profile may be called: it shows up in logs,
// reports and metric labels.
var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func (p *parser) profiles(doc *document, n *yaml.Node) {
	doc.unreadable = deref(n).Kind != yaml.MappingNode
	p.mapping(n, keyProfiles, "a mapping of profile names to their settings", func(name string, k, v *yaml.Node) {
		path := join(keyProfiles, name)
		if !profileName.MatchString(name) {
			p.fail(k, path, "", "a profile name is letters, digits, '-', '_' and '.', starting with a letter or digit")
			return
		}
		rp := &rawProfile{name: name, node: k, set: map[string]setting{}}
		doc.profiles = append(doc.profiles, rp)
		doc.byName[name] = rp
		if body := deref(v); body.Kind == yaml.ScalarNode && body.ShortTag() == "!!null" {
			p.fail(v, path, "", "no settings: give its fields, or extends: <profile> to start from another")
			rp.bad = true
			return
		}
		before := len(p.errs)
		defer func() { rp.bad = len(p.errs) > before }()
		p.mapping(v, path, "a mapping of settings", func(key string, fk, fv *yaml.Node) {
			fpath := join(path, key)
			if key == keyExtends {
				rp.extends, _ = p.reference(fv, fpath)
				return
			}
			f, ok := byKey[key]
			if !ok {
				p.fail(fk, fpath, "", "unknown field"+suggest(key, knownProfileKeys()))
				return
			}
			if val, ok := p.scalar(fv, fpath, f); ok {
				rp.set[key] = setting{node: fv, v: val}
			}
		})
	})
}

func knownProfileKeys() []string {
	keys := []string{keyExtends}
	for _, f := range fields {
		keys = append(keys, f.key)
	}
	return keys
}

func (p *parser) domains(doc *document, n *yaml.Node) {
	p.mapping(n, keyDomains, "a mapping of host patterns to profile names", func(pattern string, k, v *yaml.Node) {
		path := join(keyDomains, pattern)
		if ref, ok := p.reference(v, path); ok {
			doc.domains = append(doc.domains, rawDomain{pattern: pattern, key: k, ref: *ref})
		}
	})
}

// reference reads a profile name.
func (p *parser) reference(n *yaml.Node, path string) (*reference, bool) {
	at := n
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || n.Value == "" {
		p.fail(at, path, "", "want the name of a profile, got "+describe(n))
		return nil, false
	}
	return &reference{name: n.Value, path: path, node: at}, true
}

// scalar reads one setting of kind f.kind. YAML's own typing decides:
// a quoted "10" is a string, not a number, and yes/no are not booleans.
func (p *parser) scalar(n *yaml.Node, path string, f *field) (value, bool) {
	at := n
	n = deref(n)
	bad := func(reason string) (value, bool) {
		val := ""
		if n.Kind == yaml.ScalarNode {
			val = n.Value
		}
		p.fail(at, path, val, reason)
		return value{}, false
	}
	if n.Kind != yaml.ScalarNode {
		return bad("want " + f.kind.want() + ", got " + describe(n))
	}
	tag := n.ShortTag()
	if tag == "!!null" {
		return bad("no value: want " + f.kind.want())
	}
	switch f.kind {
	case whole:
		var i int
		if tag != "!!int" {
			return bad("want " + f.kind.want() + ", got " + describe(n))
		}
		if err := n.Decode(&i); err != nil {
			return bad("want a whole number (at most 9223372036854775807)")
		}
		return value{i: i}, true
	case flag:
		var b bool
		if tag != "!!bool" {
			return bad("want true or false, got " + describe(n))
		}
		if err := n.Decode(&b); err != nil {
			return bad("want true or false")
		}
		return value{b: b}, true
	}
	// number, seconds, millis
	if tag != "!!int" && tag != "!!float" {
		if d, err := time.ParseDuration(n.Value); err == nil && (f.kind == seconds || f.kind == millis) {
			return bad("want " + f.kind.want() + ", not a duration: write " +
				strconv.FormatFloat(float64(d)/float64(f.kind.unit()), 'f', -1, 64))
		}
		return bad("want " + f.kind.want() + ", got " + describe(n))
	}
	var x float64
	if err := n.Decode(&x); err != nil {
		return bad("want " + f.kind.want())
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return bad("want a finite number")
	}
	if f.kind == number {
		return value{f: x}, true
	}
	d, ok := toDuration(x, f.kind.unit())
	if !ok {
		return bad("out of range: a duration is at most about 292 years")
	}
	return value{d: d}, true
}
