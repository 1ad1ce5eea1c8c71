//go:build linux

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// A disk that fills mid-crawl (here: a file-size limit, RLIMIT_FSIZE, which
// the kernel reports the way it reports a full disk) ends the run as an
// error naming the cause, exit 1: a person frees space. The process is not
// killed by the signal the kernel sends with it (SIGXFSZ), and a resume
// once there is room finishes the crawl with every product once.
func TestFullDiskIsAnErrorAndTheResumeFinishes(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux) on PATH")
	}
	store := startStore(t, testserver.Config{Products: 400, PerPage: 20})
	dir := t.TempDir()
	args := []string{"--report", "json", "--checkpoint", filepath.Join(dir, "crawl.db"), "--out", filepath.Join(dir, "products.jsonl"), store.URL() + "/"}
	cmd, stdout, stderr := crawlCmdIn(t, dir, args...)
	cmd.Args = append([]string{prlimit, "--fsize=65536", "--", bin}, args...)
	cmd.Path = prlimit
	first := finish(t, cmd, cmd.Run(), stdout, stderr)
	if first.code != 1 || !strings.Contains(first.stdout+first.stderr, "file too large") {
		t.Fatalf("crawl on a full disk: exit %d, want 1 naming the cause\nstdout:\n%s\nstderr:\n%s", first.code, first.stdout, lastLinesOf(first.stderr, 5))
	}
	second := runCrawlIn(t, dir, append(args, "--resume")...)
	if second.code != 0 {
		t.Fatalf("the resume with room: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", second.code, second.stdout, lastLinesOf(second.stderr, 5))
	}
	got := products(t, filepath.Join(dir, "products.jsonl"), store)
	if len(got) != 400 {
		t.Errorf("%d products after the resume, want all 400 once", len(got))
	}
}

func lastLinesOf(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
