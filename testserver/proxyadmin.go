package testserver

import "net/url"

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

func (p *Proxy) scenarioText() string { return p.Scenario().String() }

func (p *Proxy) setScenarioFrom(q url.Values) error {
	sc, err := proxyScenarioFromQuery(q)
	if err != nil {
		return err
	}
	return p.SetScenario(sc)
}

func (p *Proxy) resetFromAdmin() error { return p.Reset() }

func (p *Proxy) adminStats() any {
	return proxyAdminStats{Count: p.Count(), Forwarded: p.Forwarded(), Scenario: p.Scenario().String()}
}
