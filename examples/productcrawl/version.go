package main

import (
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
)

// errVersion is parseConfig's answer to --version: the line is printed,
// the run exits 0.
var errVersion = errors.New("version printed")

// versionLine says which build this is: the module version (or "devel"
// for a build from a checkout), the commit it was built from and whether
// the tree was modified, the Go version.
func versionLine() string {
	v, rev, dirty := "devel", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	parts := []string{"productcrawl", v}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+modified"
		}
		parts = append(parts, "commit "+rev)
	}
	return strings.Join(append(parts, runtime.Version()), " ")
}
