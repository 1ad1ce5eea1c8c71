package metrics_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// core is every package a crawl that wants neither Prometheus nor Redis
// imports.
var core = []string{"./extensions/breaker", "./extensions/validate",
	"./outcome", "./storage", "./storage/bolt", "./storage/memory", "./clock", "./report", "."}

// heavy are the module paths that must stay at the edges: in this module,
// storage/redis's, or the bench's, never in the library's root module.
var heavy = []string{"github.com/prometheus/", "github.com/redis/go-redis/", "github.com/alicebob/miniredis/",
	"github.com/yuin/gopher-lua", "github.com/sony/gobreaker"}

// goList runs go with args in dir (".." is the root module, "." this one).
func goList(t *testing.T, dir string, env []string, args ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list dependencies with")
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.Fields(string(out))
}

func listDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	return goList(t, "..", nil, append([]string{"list", "-deps"}, pkgs...)...)
}

// The root module, on its own (no go.work), requires none of the heavy
// modules: a program that imports only the library does not get them as
// version floors. They are required by this module, storage/redis's and the
// tools' (bench, examples).
func TestTheRootModuleRequiresNoHeavyModule(t *testing.T) {
	mods := goList(t, "..", []string{"GOWORK=off"}, "list", "-m", "-f", "{{.Path}}", "all")
	if len(mods) == 0 || mods[0] != "github.com/breakwater-crawl/breakwater" {
		t.Fatalf("go list -m all in the root listed %q; want the root module first", mods)
	}
	for _, m := range mods {
		for _, h := range heavy {
			if strings.HasPrefix(m, h) {
				t.Errorf("the root module's graph holds %s: move what needs it to a module of its own", m)
			}
		}
	}
	// The listing is real: this module's own graph holds Prometheus.
	found := false
	for _, m := range goList(t, ".", []string{"GOWORK=off"}, "list", "-m", "-f", "{{.Path}}", "all") {
		found = found || m == "github.com/prometheus/client_golang"
	}
	if !found {
		t.Fatal("go list -m all in metrics lacks github.com/prometheus/client_golang")
	}
}

func TestCoreImportsNeitherPrometheusNorRedis(t *testing.T) {
	deps := listDeps(t, core...)
	seen := map[string]bool{}
	for _, d := range deps {
		seen[d] = true
		for _, h := range heavy {
			if strings.HasPrefix(d, h) {
				t.Errorf("a core package depends on %s; keep it behind an interface in its own package", d)
			}
		}
	}
	// The listing is real: it holds what the core does import.
	for _, want := range []string{"github.com/gocolly/colly/v2", "github.com/breakwater-crawl/breakwater/extensions/breaker", "go.etcd.io/bbolt"} {
		if !seen[want] {
			t.Errorf("go list -deps of the core lacks %s: is the listing what it claims?", want)
		}
	}
}

// The check above would see Prometheus if it were there: it is in this
// package's own dependencies (listed in this module: with GOWORK=off the
// root module does not contain this package).
func TestTheDependencyCheckSeesPrometheus(t *testing.T) {
	found := false
	for _, d := range goList(t, ".", nil, "list", "-deps", ".") {
		found = found || strings.HasPrefix(d, "github.com/prometheus/client_golang/")
	}
	if !found {
		t.Fatal("go list -deps ./metrics shows no client_golang")
	}
}
