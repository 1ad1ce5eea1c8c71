package metrics_test

import (
	"os/exec"
	"strings"
	"testing"
)

// core is every package a crawl that wants neither Prometheus nor Redis
// imports.
var core = []string{"./extensions/breaker", "./extensions/breaker/profiles", "./extensions/validate",
	"./outcome", "./storage", "./storage/bolt", "./storage/memory", "./clock", "./report", "."}

// heavy are the module paths that must stay at the edges.
var heavy = []string{"github.com/prometheus/", "github.com/redis/go-redis/"}

func listDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list dependencies with")
	}
	cmd := exec.Command(goBin, append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = ".." // the module root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
	}
	return strings.Fields(string(out))
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
// package's own dependencies.
func TestTheDependencyCheckSeesPrometheus(t *testing.T) {
	found := false
	for _, d := range listDeps(t, "./metrics") {
		found = found || strings.HasPrefix(d, "github.com/prometheus/client_golang/")
	}
	if !found {
		t.Fatal("go list -deps ./metrics shows no client_golang")
	}
}
