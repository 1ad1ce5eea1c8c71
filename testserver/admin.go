package testserver

import (
	"encoding/json"
	"net/http"
	"net/url"
)

const adminPrefix = "/_admin/"

// AdminHelp describes the admin endpoints a store serves when Config.Admin is
// set.
const AdminHelp = `  GET  /_admin/scenario                     the scenario in force, in text form
  POST /_admin/scenario?mode=M&key=value...  switch scenario (keys as in the text form)
  POST /_admin/reset                        clear the request log, restart the scenario
  GET  /_admin/stats                        JSON: count, failing_since_seq, sent_after_failing, scenario`

// adminStats is the JSON of GET /_admin/stats.
type adminStats struct {
	Count            int    `json:"count"`
	FailingSinceSeq  int    `json:"failing_since_seq"`
	SentAfterFailing int    `json:"sent_after_failing"`
	Scenario         string `json:"scenario"`
}

// adminTarget is what the admin endpoints act on: a store or a proxy.
type adminTarget interface {
	scenarioText() string
	setScenarioFrom(q url.Values) error
	resetFromAdmin() error
	adminStats() any
}

// serveAdmin answers the admin endpoints of t; help names the text that
// lists them.
func serveAdmin(w http.ResponseWriter, r *http.Request, t adminTarget, help string) {
	switch r.URL.Path {
	case adminPrefix + "scenario":
		switch r.Method {
		case http.MethodGet:
		case http.MethodPost:
			if err := t.setScenarioFrom(r.URL.Query()); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "use GET to read the scenario, POST to set it", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(t.scenarioText() + "\n"))
	case adminPrefix + "reset":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "use POST to reset", http.StatusMethodNotAllowed)
			return
		}
		if err := t.resetFromAdmin(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case adminPrefix + "stats":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(t.adminStats())
	default:
		http.Error(w, "unknown admin endpoint; see "+help, http.StatusNotFound)
	}
}

func (s *Store) scenarioText() string { return s.Scenario().String() }

func (s *Store) setScenarioFrom(q url.Values) error {
	sc, err := scenarioFromQuery(q)
	if err != nil {
		return err
	}
	return s.SetScenario(sc)
}

func (s *Store) resetFromAdmin() error {
	s.Reset()
	return nil
}

func (s *Store) adminStats() any {
	_, seq := s.FailingSince()
	return adminStats{Count: s.Count(), FailingSinceSeq: seq, SentAfterFailing: s.SentAfterFailing(),
		Scenario: s.Scenario().String()}
}
