package testserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A proxy with Admin set is switched by requests addressed to it, which it
// does not log.
func TestProxyAdminEndpointSwitchesScenario(t *testing.T) {
	s := start(t, Config{Products: 3})
	p := startProxy(t, ProxyConfig{Admin: true})
	via := viaProxy(t, p.URL())
	if status, _, err := getVia(context.Background(), via, s.ProductURL(1)); err != nil || status != 200 {
		t.Fatalf("healthy: %d, %v", status, err)
	}
	code, body := post(t, p.URL()+"/_admin/scenario?mode=block403&after=1")
	if code != 200 || strings.TrimSpace(body) != "block403:after=1" {
		t.Fatalf("POST scenario = %d %q", code, body)
	}
	if code, _, body := get(t, p.URL()+"/_admin/scenario"); code != 200 || strings.TrimSpace(string(body)) != "block403:after=1" {
		t.Errorf("GET scenario = %d %q", code, body)
	}
	for _, want := range []int{200, 403} {
		if status, _, err := getVia(context.Background(), via, s.ProductURL(2)); err != nil || status != want {
			t.Fatalf("after the switch: %d, %v; want %d", status, err, want)
		}
	}
	_, _, raw := get(t, p.URL()+"/_admin/stats")
	var st proxyAdminStats
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("stats %q: %v", raw, err)
	}
	if st.Count != 3 || st.Forwarded != 2 || st.Scenario != "block403:after=1" {
		t.Errorf("stats = %+v, want 3 requests (admin ones not logged), 2 forwarded", st)
	}
	for _, bad := range []string{"mode=sideways", "mode=refuse&after=x", "mode=latency&colour=red"} {
		if code, body := post(t, p.URL()+"/_admin/scenario?"+bad); code != 400 || !strings.Contains(body, "invalid scenario") {
			t.Errorf("POST ?%s = %d %q, want 400 naming the problem", bad, code, body)
		}
	}
	if code, _ := post(t, p.URL()+"/_admin/reset"); code != http.StatusNoContent || p.Count() != 0 {
		t.Errorf("POST reset = %d, count %d; want 204 and the log cleared", code, p.Count())
	}
}
