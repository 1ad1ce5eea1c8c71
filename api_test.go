package breakwater_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update-api", false, "rewrite the api/*.txt records from the code")

// apiModules are the library's modules and the record of each one's
// exported API. The commands (bench, chaos, examples) have none.
var apiModules = []struct{ dir, path, record string }{
	{".", "github.com/breakwater-crawl/breakwater", "api/breakwater.txt"},
	{"storage/redis", "github.com/breakwater-crawl/breakwater/storage/redis", "api/storage-redis.txt"},
	{"metrics", "github.com/breakwater-crawl/breakwater/metrics", "api/metrics.txt"},
}

// TestTheAPIRecordIsTheAPI fails when a module's exported API (every
// exported name of every package a user can import, with its signature)
// differs from its record in api/, as Go's own api/ files are checked: a
// change of the API is then a change of the record too, seen in review
// and named in CHANGELOG.md. After a deliberate change:
//
//	go test -run TestTheAPIRecordIsTheAPI -update-api .
func TestTheAPIRecordIsTheAPI(t *testing.T) {
	for _, m := range apiModules {
		if _, err := os.Stat(filepath.Join(m.dir, "go.mod")); err != nil {
			t.Logf("%s: not in this tree (a module cache copy holds one module): not checked", m.dir)
			continue
		}
		got, err := moduleAPI(m.dir, m.path)
		if err != nil {
			t.Fatalf("%s: %v", m.dir, err)
		}
		if *updateAPI {
			if err := os.WriteFile(m.record, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(m.record)
		if err != nil {
			t.Fatalf("%s: %v; write it with: go test -run TestTheAPIRecordIsTheAPI -update-api .", m.record, err)
		}
		if added, removed := lineDiff(string(want), got); len(added)+len(removed) > 0 {
			var diff strings.Builder
			for _, l := range added {
				diff.WriteString("\n+ " + l)
			}
			for _, l := range removed {
				diff.WriteString("\n- " + l)
			}
			t.Errorf("%s's exported API differs from %s (%d added, %d removed); if the change is meant, "+
				"add its upgrade line to CHANGELOG.md and run: go test -run TestTheAPIRecordIsTheAPI -update-api .%s",
				m.dir, m.record, len(added), len(removed), diff.String())
		}
	}
}

// lineDiff returns the lines of got not in want, and of want not in got.
func lineDiff(want, got string) (added, removed []string) {
	w, g := lineSet(want), lineSet(got)
	for l := range g {
		if !w[l] {
			added = append(added, l)
		}
	}
	for l := range w {
		if !g[l] {
			removed = append(removed, l)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}

func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			m[l] = true
		}
	}
	return m
}

// moduleAPI lists the exported API of every importable package of the
// module in dir (no internal, testdata or main package, no nested module),
// one sorted line per name, in the style of Go's api/ files.
func moduleAPI(dir, modPath string) (string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		base := d.Name()
		if rel != "." {
			if base == "internal" || base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		pkgPath := modPath
		if rel != "." {
			pkgPath = path.Join(modPath, rel)
		}
		ls, err := packageAPI(p, pkgPath)
		lines = append(lines, ls...)
		return err
	})
	if err != nil {
		return "", err
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

// packageAPI lists the exported names of the package in dir.
func packageAPI(dir, pkgPath string) ([]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", dir, err)
	}
	var out []string
	for name, pkg := range pkgs {
		if name == "main" {
			continue
		}
		pre := "pkg " + pkgPath + ", "
		str := func(e ast.Node) string {
			var b bytes.Buffer
			_ = printer.Fprint(&b, fset, e)
			return strings.Join(strings.Fields(b.String()), " ")
		}
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						out = append(out, pre+"func "+d.Name.Name+signature(str, d.Type))
						continue
					}
					recv := d.Recv.List[0].Type
					bare := recv
					if s, ok := bare.(*ast.StarExpr); ok {
						bare = s.X
					}
					if ix, ok := bare.(*ast.IndexExpr); ok {
						bare = ix.X
					}
					if id, ok := bare.(*ast.Ident); !ok || !id.IsExported() {
						continue
					}
					out = append(out, pre+"method ("+str(recv)+") "+d.Name.Name+signature(str, d.Type))
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								out = append(out, typeAPI(pre, str, s)...)
							}
						case *ast.ValueSpec:
							kind := "var "
							if d.Tok == token.CONST {
								kind = "const "
							}
							for _, n := range s.Names {
								if !n.IsExported() {
									continue
								}
								l := pre + kind + n.Name
								if s.Type != nil {
									l += " " + str(s.Type)
								}
								out = append(out, l)
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

// typeAPI lists a type and, for a struct or an interface, each exported
// field or method.
func typeAPI(pre string, str func(ast.Node) string, s *ast.TypeSpec) []string {
	name := s.Name.Name
	if s.TypeParams != nil {
		name += "[" + fields(str, s.TypeParams, true) + "]"
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		out := []string{pre + "type " + name + " struct"}
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 { // embedded
				out = append(out, pre+"type "+name+" struct, embedded "+str(f.Type))
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					out = append(out, pre+"type "+name+" struct, "+n.Name+" "+str(f.Type))
				}
			}
		}
		return out
	case *ast.InterfaceType:
		out := []string{pre + "type " + name + " interface"}
		for _, f := range t.Methods.List {
			if len(f.Names) == 0 {
				out = append(out, pre+"type "+name+" interface, "+str(f.Type))
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					if ft, ok := f.Type.(*ast.FuncType); ok {
						out = append(out, pre+"type "+name+" interface, "+n.Name+signature(str, ft))
					}
				}
			}
		}
		return out
	}
	if s.Assign.IsValid() {
		return []string{pre + "type " + name + " = " + str(s.Type)}
	}
	return []string{pre + "type " + name + " " + str(s.Type)}
}

// signature is a function type's parameters and results, names left out.
func signature(str func(ast.Node) string, ft *ast.FuncType) string {
	s := "(" + fields(str, ft.Params, false) + ")"
	if ft.Results != nil && len(ft.Results.List) > 0 {
		r := fields(str, ft.Results, false)
		if len(ft.Results.List) == 1 && len(ft.Results.List[0].Names) <= 1 {
			s += " " + r
		} else {
			s += " (" + r + ")"
		}
	}
	return s
}

// fields lists a field list's types, each once per name (with the names
// when named is set: type parameters).
func fields(str func(ast.Node) string, fl *ast.FieldList, named bool) string {
	if fl == nil {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		n := max(len(f.Names), 1)
		for i := range n {
			if named && len(f.Names) > 0 {
				parts = append(parts, f.Names[i].Name+" "+str(f.Type))
			} else {
				parts = append(parts, str(f.Type))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// TestEveryNameGoneSince010HasAnUpgradeLine checks CHANGELOG.md's
// "Upgrading from 0.1.0" names every exported name of 0.1.0 (recorded in
// api/v0.1.0/) that no module exports any more, as pkg.Name (a method as
// pkg.Type.Method, of a type that is still there), so a user whose code
// stopped compiling finds the line that says what to write instead.
func TestEveryNameGoneSince010HasAnUpgradeLine(t *testing.T) {
	old, err := os.ReadFile("api/v0.1.0/breakwater.txt")
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]bool{}
	for _, m := range apiModules {
		b, err := os.ReadFile(m.record)
		if err != nil {
			t.Fatal(err)
		}
		for n := range apiNames(string(b)) {
			now[n] = true
		}
	}
	log, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(log), "### Upgrading from 0.1.0")
	if !ok {
		t.Fatal(`CHANGELOG.md has no "### Upgrading from 0.1.0" section`)
	}
	section, _, _ = strings.Cut(section, "\n### ")
	gone := 0
	was := apiNames(string(old))
	for n := range was {
		if now[n] {
			continue
		}
		pkg, name, _ := strings.Cut(n, " ")
		if typ, _, isMethod := strings.Cut(name, "."); isMethod && !now[pkg+" "+typ] && was[pkg+" "+typ] {
			continue // its type is gone, and named
		}
		gone++
		if !strings.Contains(section, path.Base(pkg)+"."+name) {
			t.Errorf("%s.%s (package %s) is gone since 0.1.0 and CHANGELOG.md's upgrade section does not name it", path.Base(pkg), name, pkg)
		}
	}
	if gone == 0 {
		t.Fatal("no name is gone since 0.1.0: the test no longer reads the records")
	}
}

// apiNames returns the names an API record exports, as "pkgpath Name" and
// "pkgpath Type.Method" (fields and interface methods are left out).
func apiNames(record string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(record, "\n") {
		rest, ok := strings.CutPrefix(l, "pkg ")
		if !ok {
			continue
		}
		pkg, decl, _ := strings.Cut(rest, ", ")
		if strings.Contains(decl, "struct, ") || strings.Contains(decl, "interface, ") {
			continue
		}
		kind, decl, _ := strings.Cut(decl, " ")
		var name string
		switch kind {
		case "func", "type", "var", "const":
			name = strings.FieldsFunc(decl, func(r rune) bool { return r == '(' || r == '[' || r == ' ' })[0]
		case "method":
			recv, after, _ := strings.Cut(decl, ") ")
			recv = strings.TrimLeft(recv, "(*")
			recv, _, _ = strings.Cut(recv, "[")
			name = recv + "." + strings.FieldsFunc(after, func(r rune) bool { return r == '(' || r == '[' || r == ' ' })[0]
		default:
			continue
		}
		out[pkg+" "+name] = true
	}
	return out
}
