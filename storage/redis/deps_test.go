package redis_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The Redis storage meets the breaker through package circuit (the shared
// circuit) and package observe (the queue follows the breaker): it never
// imports the Colly extension, so neither changes under the other.
func TestStorageRedisDoesNotImportTheBreakerExtension(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list dependencies with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/breakwater-crawl/breakwater/extensions/") {
			t.Errorf("storage/redis imports %s", d)
		}
	}
	if !strings.Contains(string(out), "github.com/breakwater-crawl/breakwater/circuit\n") {
		t.Errorf("storage/redis does not import package circuit:\n%s", out)
	}
}
