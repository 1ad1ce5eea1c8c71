package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/observe"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// The status line names every domain by its host and port, even when they
// share a host, and shows a domain halted by Retry-After as paused with
// the time left, not as "closed".
func TestStatusLineNamesHostsAndShowsAPauseWithTimeLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	calm := startStore(t, testserver.Config{Products: 20, PerPage: 20, Scenario: testserver.Scenario{Latency: 20 * time.Millisecond}})
	busy := startStore(t, testserver.Config{Products: 20, PerPage: 20,
		Scenario: testserver.Scenario{Mode: testserver.Throttle, After: 3, RetryAfter: 3 * time.Second, RecoverAfter: time.Second}})
	r := runCrawl(t, calm.URL()+"/", busy.URL()+"/", "--status", "line", "--parallelism", "1", "--log-level", "warn")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	i := strings.Index(r.stdout, "outcome: ")
	if i < 0 {
		t.Fatalf("no report:\n%q", r.stdout)
	}
	line := r.stdout[:i]
	if !strings.Contains(line, " "+calm.Host()+" ") || !strings.Contains(line, " "+busy.Host()+" ") {
		t.Errorf("status output %q: want both domains by host and port (%s, %s)", line, calm.Host(), busy.Host())
	}
	if !regexp.MustCompile(regexp.QuoteMeta(busy.Host()) + ` PAUSED [1-3]s `).MatchString(line) {
		t.Errorf("status output %q: want %s PAUSED with the seconds left", line, busy.Host())
	}
}

// A trip's window (20 outcomes) stays out of the console lines unless
// the level is debug; JSON logs always carry it.
func TestConsoleLogsShowATripsWindowAtDebugOnly(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 40, PerPage: 40, Scenario: testserver.Scenario{Mode: testserver.Degrade, After: 5}})
	for _, c := range []struct {
		args   []string
		window bool
	}{
		{[]string{"--log-format", "console"}, false},
		{[]string{"--log-format", "console", "--log-level", "debug"}, true},
		{[]string{"--log-format", "json"}, true},
	} {
		r := runCrawl(t, append(c.args, "--parallelism", "1", store.URL()+"/")...)
		trip := lineWith(r.stderr, "breaker_transition")
		if r.code != 2 || trip == "" || !strings.Contains(trip, "window_n") {
			t.Fatalf("%v: exit %d, trip line %q: want a trip logged with window_n\n%s", c.args, r.code, trip, r.stderr)
		}
		has := strings.Contains(trip, "window=[") || strings.Contains(trip, `"window":[`)
		if has != c.window {
			t.Errorf("%v: trip line %q: window shown %v, want %v", c.args, trip, has, c.window)
		}
		store.Reset()
	}
}

func TestDomainStateSaysWhatHoldsTheDomainAndForHowLong(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	throttled := map[string]int64{circuit.Throttled.String(): 3}
	for _, c := range []struct {
		d    observe.DomainStats
		word string
		left time.Duration
	}{
		{observe.DomainStats{State: circuit.Open, RetryAt: now.Add(57*time.Second + time.Millisecond)}, "open", 58 * time.Second},
		{observe.DomainStats{State: circuit.HalfOpen}, "half-open", 0},
		{observe.DomainStats{Pace: observe.PaceStats{HaltUntil: now.Add(2500 * time.Millisecond)}}, "paused", 3 * time.Second},
		{observe.DomainStats{Outcomes: throttled, Pace: observe.PaceStats{Gap: 40 * time.Millisecond}}, "slowed", 0},
		{observe.DomainStats{Pace: observe.PaceStats{Gap: 40 * time.Millisecond}}, "closed", 0},
		{observe.DomainStats{State: circuit.Open, RetryAt: now.Add(-time.Second)}, "open", 0},
	} {
		if word, left := domainState(c.d, now); word != c.word || left != c.left {
			t.Errorf("%+v: %s %v, want %s %v", c.d, word, left, c.word, c.left)
		}
	}
}
