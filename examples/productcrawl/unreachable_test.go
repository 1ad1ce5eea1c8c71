package main

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/testserver"
)

// A start URL nothing listens on is logged at the default level, like a
// DNS failure, and when it is the only one the run is an error that says
// so first, not "tripped: no human needed".
func TestTheOnlyStartURLUnreachableIsAnErrorThatSaysSo(t *testing.T) {
	addr := freeAddr(t)
	r := runCrawl(t, "--log-format", "json", "http://"+addr+"/")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (error: a person must look)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	want := fmt.Sprintf("  error    unreachable: the only start URL cannot be reached: http://%s/ (connection refused)", addr)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "outcome: error (exit 1)") || !strings.HasPrefix(lines[1], want) {
		t.Errorf("report:\n%s\nwant it to start with the error and then %q", r.stdout, want)
	}
	ev := lineWith(r.stderr, `"event":"unreachable"`)
	if !strings.Contains(ev, `"level":"warn"`) || !strings.Contains(ev, `"cause":"connection refused"`) {
		t.Errorf("unreachable event %q: want it at warn level with its cause\n%s", ev, r.stderr)
	}
}

// One unreachable start URL among others that answer: the run is what
// the rest made it (tripped: the URL is left for a rescheduled run), and
// the report names the one that could not be reached.
func TestOneUnreachableStartURLAmongOthersIsNamed(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 5, PerPage: 5})
	addr := freeAddr(t)
	r := runCrawl(t, "--report", "json", "--log-level", "warn", store.URL()+"/", "http://"+addr+"/")
	rep := r.report(t)
	if r.code != 2 || !rep.hasFinding("unreachable", addr) || rep.Outcome.Records != 5 {
		t.Fatalf("exit %d, findings %+v, %d records: want 2, an unreachable finding for %s, the store's 5 records", r.code, rep.Outcome.Findings, rep.Outcome.Records, addr)
	}
}

func TestUnreachableCausesAreDNSAndRefusedOnly(t *testing.T) {
	for err, want := range map[error]string{
		&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}:                  "name not resolved",
		fmt.Errorf("get: %w", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host"}}): "name not resolved",
		fmt.Errorf("i/o timeout"): "",
		nil:                       "",
	} {
		if got := unreachableCause(err); got != want {
			t.Errorf("unreachableCause(%v) = %q, want %q", err, got, want)
		}
	}
}
