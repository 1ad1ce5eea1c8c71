package testserver

import (
	"encoding/json"
	"net/http"
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

func (s *Store) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case adminPrefix + "scenario":
		switch r.Method {
		case http.MethodGet:
		case http.MethodPost:
			sc, err := scenarioFromQuery(r.URL.Query())
			if err == nil {
				err = s.SetScenario(sc)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "use GET to read the scenario, POST to set it", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(s.Scenario().String() + "\n"))
	case adminPrefix + "reset":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "use POST to reset", http.StatusMethodNotAllowed)
			return
		}
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	case adminPrefix + "stats":
		_, seq := s.FailingSince()
		st := adminStats{Count: s.Count(), FailingSinceSeq: seq, SentAfterFailing: s.SentAfterFailing(),
			Scenario: s.Scenario().String()}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	default:
		http.Error(w, "unknown admin endpoint; see AdminHelp", http.StatusNotFound)
	}
}
