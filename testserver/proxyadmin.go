package testserver

import (
	"encoding/json"
	"net/http"
)

// ProxyAdminHelp describes the admin endpoints a proxy serves, to requests
// addressed to the proxy itself, when ProxyConfig.Admin is set.
const ProxyAdminHelp = `  GET  /_admin/scenario                     the proxy scenario in force, in text form
  POST /_admin/scenario?mode=M&key=value...  switch scenario (keys as in the proxy text form)
  POST /_admin/reset                        clear the request log, restart the scenario
  GET  /_admin/stats                        JSON: count, forwarded, scenario
  A refusing proxy is not listening: it cannot be switched back here.`

// proxyAdminStats is the JSON of a proxy's GET /_admin/stats.
type proxyAdminStats struct {
	Count     int    `json:"count"`
	Forwarded int    `json:"forwarded"`
	Scenario  string `json:"scenario"`
}

func (p *Proxy) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case adminPrefix + "scenario":
		switch r.Method {
		case http.MethodGet:
		case http.MethodPost:
			sc, err := proxyScenarioFromQuery(r.URL.Query())
			if err == nil {
				err = p.SetScenario(sc)
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
		_, _ = w.Write([]byte(p.Scenario().String() + "\n"))
	case adminPrefix + "reset":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "use POST to reset", http.StatusMethodNotAllowed)
			return
		}
		if err := p.Reset(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case adminPrefix + "stats":
		st := proxyAdminStats{Count: p.Count(), Forwarded: p.Forwarded(), Scenario: p.Scenario().String()}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	default:
		http.Error(w, "unknown admin endpoint; see ProxyAdminHelp", http.StatusNotFound)
	}
}
