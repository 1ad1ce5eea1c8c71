package outcome_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/outcome"
)

type judge outcome.Evidence

func (j judge) Judge() outcome.Evidence { return outcome.Evidence(j) }

func TestDecideRanksEndings(t *testing.T) {
	trip := outcome.Finding{State: outcome.Tripped, Kind: "circuit_open", Reason: "circuit open for b.test", Domains: []string{"b.test"}}
	broken := outcome.Finding{State: outcome.Error, Kind: "selector_broken", Reason: "selector broken on a.test", Domains: []string{"a.test"}}
	tests := []struct {
		name    string
		records int64
		err     error
		judges  []outcome.Judge
		want    outcome.State
		exit    int
		domains []string
	}{
		{"work done", 10, nil, []outcome.Judge{judge{Valid: 10, Counts: true}}, outcome.Complete, 0, nil},
		{"nothing valid", 0, nil, []outcome.Judge{judge{Counts: true}}, outcome.Empty, 3, nil},
		{"judges count when records unknown", -1, nil, []outcome.Judge{judge{Valid: 3, Counts: true}}, outcome.Complete, 0, nil},
		{"strictest counter wins", -1, nil, []outcome.Judge{judge{Valid: 40, Counts: true}, judge{Valid: 0, Counts: true}}, outcome.Empty, 3, nil},
		{"tripped beats records", 10, nil, []outcome.Judge{judge{Findings: []outcome.Finding{trip}}}, outcome.Tripped, 2, []string{"b.test"}},
		{"tripped beats empty", 0, nil, []outcome.Judge{judge{Findings: []outcome.Finding{trip}}}, outcome.Tripped, 2, []string{"b.test"}},
		{"error beats tripped", 10, nil, []outcome.Judge{judge{Findings: []outcome.Finding{trip, broken}}}, outcome.Error, 1, []string{"a.test"}},
		{"crawl error", 10, errors.New("disk full"), nil, outcome.Error, 1, nil},
		{"nil judge ignored", 1, nil, []outcome.Judge{nil}, outcome.Complete, 0, nil},
	}
	for _, tt := range tests {
		o := outcome.Decide(tt.records, append(tt.judges, outcome.Failed(tt.err))...)
		if o.State != tt.want || o.State.ExitCode() != tt.exit {
			t.Errorf("%s: %s (exit %d), want %s (exit %d); reason %q", tt.name, o.State, o.State.ExitCode(), tt.want, tt.exit, o.Reason)
		}
		if strings.Join(o.Domains, ",") != strings.Join(tt.domains, ",") {
			t.Errorf("%s: domains %v, want %v", tt.name, o.Domains, tt.domains)
		}
		if o.Reason == "" {
			t.Errorf("%s: no reason given", tt.name)
		}
	}
	if outcome.Usage != 64 {
		t.Errorf("usage exit code %d, want 64", outcome.Usage)
	}
}

func TestStateRoundTripsThroughText(t *testing.T) {
	for _, s := range []outcome.State{outcome.Complete, outcome.Empty, outcome.Tripped, outcome.Error} {
		b, _ := s.MarshalText()
		var got outcome.State
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Errorf("%s: round trip gave %s, %v", s, got, err)
		}
	}
	var s outcome.State
	if err := s.UnmarshalText([]byte("fine")); err == nil {
		t.Error("unknown state accepted")
	}
}
