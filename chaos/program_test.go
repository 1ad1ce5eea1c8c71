package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

// TestMain lets this test binary be a program case's program: the tests
// below run real run sequences, whose runs start it again.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childMain(spec))
	}
	os.Exit(m.Run())
}

// runProgramCase runs a program case on small healthy stores, with the
// deliberate break brk ("" for none) on in its program, and returns what
// the invariants found.
func runProgramCase(t *testing.T, p Program, brk string, sites ...Site) []Violation {
	t.Helper()
	t.Setenv(breakEnv, brk)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p.Cooldown == 0 {
		p.Cooldown = 100 * time.Millisecond
	}
	if len(sites) == 0 {
		sites = []Site{{Kind: kHealthy, Products: 4, PerPage: 3}}
	}
	c := Case{Seed: 1, Program: &p, Sites: sites,
		Wiring: Wiring{Profile: breaker.Standard(), Timeout: 2 * time.Second, Checkpoint: cpBolt, Async: p.Async}}
	r := runCase(c, env{self: self, scale: 1})
	t.Logf("%s | %s", c, r.Note)
	for _, v := range r.Violations {
		t.Logf("  %s", v)
	}
	return r.Violations
}

// with returns the violations of invariant inv.
func with(vs []Violation, inv int) []Violation {
	var out []Violation
	for _, v := range vs {
		if v.Inv == inv {
			out = append(out, v)
		}
	}
	return out
}

// TestAPlainProgramOnAHealthyStoreKeepsTheProgramInvariants is the
// baseline of the breaks below: without a break, a plain program run once
// over a healthy store violates none of invariants 10-14.
func TestAPlainProgramOnAHealthyStoreKeepsTheProgramInvariants(t *testing.T) {
	vs := runProgramCase(t, Program{Shape: shPlain, Seq: sqOnce}, "")
	for inv := 10; inv <= 14; inv++ {
		if len(with(vs, inv)) > 0 {
			t.Fatalf("invariant %d reported without a break: %v", inv, vs)
		}
	}
}

func TestWritingAProductTwiceBreaksInvariant10(t *testing.T) {
	vs := with(runProgramCase(t, Program{Shape: shPlain, Seq: sqOnce}, "twice"), 10)
	if len(vs) == 0 || !strings.Contains(vs[0].Msg, "more than once") {
		t.Fatalf("a program writing every product twice passed invariant 10: %v", vs)
	}
}

func TestAHealedFleetNotEndingCompleteBreaksInvariant11(t *testing.T) {
	failing := Site{Kind: kDegrade, Products: 4, PerPage: 3, Hold: time.Second}
	vs := with(runProgramCase(t, Program{Shape: shPlain, Seq: sqTripHeal, Async: true}, "exit2", failing), 11)
	if len(vs) == 0 || !strings.Contains(vs[0].Msg, "healed") {
		t.Fatalf("a healed fleet whose last run exited 2 passed invariant 11: %v", vs)
	}
}

func TestCompleteWithAProductNotWrittenBreaksInvariant12(t *testing.T) {
	vs := with(runProgramCase(t, Program{Shape: shPlain, Seq: sqOnce}, "drop"), 12)
	if len(vs) == 0 || !strings.Contains(vs[0].Msg, "1 of 4 promised products not in its output") {
		t.Fatalf("a complete run that left a product unwritten passed invariant 12: %v", vs)
	}
}

func TestACrashExiting0BreaksInvariant13(t *testing.T) {
	// Sync: the panic is on the main goroutine, where the break recovers it.
	vs := with(runProgramCase(t, Program{Shape: shPanic, PanicAt: 2, Seq: sqOnce}, "crash0"), 13)
	if len(vs) == 0 || !strings.Contains(vs[0].Msg, "exited 0") {
		t.Fatalf("a crash that exited 0 passed invariant 13: %v", vs)
	}
}

func TestASIGTERMedRunWithoutItsReportBreaksInvariant13(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	// The signal comes once the program's run has begun: under
	// breakwater.Main it starts a child process first.
	slow := Site{Kind: kHealthy, Products: 20, PerPage: 5, Latency: 40 * time.Millisecond}
	p := Program{Shape: shPlain, Seq: sqTerm, At: 200 * time.Millisecond, FromStart: true}
	if vs := with(runProgramCase(t, p, "", slow), 13); len(vs) > 0 {
		t.Fatalf("a run stopped by SIGTERM with its report broke invariant 13: %v", vs)
	}
	vs := with(runProgramCase(t, p, "noreport", slow), 13)
	if len(vs) == 0 || !strings.Contains(vs[0].Msg, "SIGTERM") {
		t.Fatalf("a run stopped by SIGTERM that printed no report passed invariant 13: %v", vs)
	}
}

func TestOnErrorBeforeOnRequestBreaksInvariant14(t *testing.T) {
	vs := with(runProgramCase(t, Program{Shape: shPlain, Seq: sqOnce, Async: true}, "onerror-first"), 14)
	if len(vs) == 0 || !strings.Contains(vs[0].Msg, "OnRequest had not seen") {
		t.Fatalf("an OnError before the user's OnRequest passed invariant 14: %v", vs)
	}
}

// TestProgramSeedsLeaveEarlierSeedsAlone: a run's program cases take seeds
// of their own kind, so that every seed printed before them (SEEDS.md, a
// violation's replay) still draws the case it drew.
func TestProgramSeedsLeaveEarlierSeedsAlone(t *testing.T) {
	programs := 0
	for i := range 200 {
		s, r := caseSeed(1, i), runSeed(1, i)
		if NewCase(s).Program != nil {
			t.Fatalf("the earlier seed %d now draws a program case", s)
		}
		if r == s {
			continue
		}
		programs++
		if c := NewCase(r); c.Program == nil || !strings.Contains(c.String(), "program(") {
			t.Fatalf("run seed %d (in place of %d) draws no program case: %s", r, s, c)
		}
	}
	if programs < 20 || programs > 70 {
		t.Fatalf("%d of 200 cases are program cases, want about a fifth", programs)
	}
}
