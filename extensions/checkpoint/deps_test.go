package checkpoint_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The checkpoint runs on any storage.Store, so importing it must not
// bring in a store backend: a crawl on storage/memory or storage/redis
// does not link the embedded store's database (bbolt), and one on
// storage/bolt does not link go-redis. (storage/redis is a module of its
// own, which this module does not require, so only a go.work could let an
// import of it build here; bbolt is the ban that can still be broken.)
func TestImportsNoStoreBackend(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the package's dependencies")
	}
	cmd := exec.Command(gocmd, "list", "-deps", "-f", "{{.ImportPath}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || !strings.HasSuffix(deps[len(deps)-1], "/extensions/checkpoint") {
		t.Fatalf("go list -deps listed %q; want the checkpoint's dependencies, itself last", deps)
	}
	for _, p := range deps {
		for _, banned := range []string{"go.etcd.io/bbolt", "/storage/bolt", "/storage/redis", "github.com/redis/"} {
			if strings.HasPrefix(p, banned) || strings.HasSuffix(p, banned) {
				t.Errorf("the checkpoint imports %s (matching %s): a store backend is the caller's choice, passed to New", p, banned)
			}
		}
	}
}
