package testserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := client.Post(url, "", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdminEndpointSwitchesScenario(t *testing.T) {
	s := start(t, Config{Admin: true})
	get(t, s.ProductURL(1))

	code, body := post(t, s.URL()+"/_admin/scenario?mode=degrade&after=1&recover=2m")
	if code != 200 || strings.TrimSpace(body) != "degrade:after=1,recover=2m0s" {
		t.Fatalf("POST scenario = %d %q", code, body)
	}
	if code, _, body := get(t, s.URL()+"/_admin/scenario"); code != 200 || strings.TrimSpace(string(body)) != "degrade:after=1,recover=2m0s" {
		t.Errorf("GET scenario = %d %q", code, body)
	}
	get(t, s.ProductURL(2))
	if code, _, _ := get(t, s.ProductURL(3)); code != 503 {
		t.Errorf("after admin switch = %d, want 503", code)
	}

	_, _, raw := get(t, s.URL()+"/_admin/stats")
	var st adminStats
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("stats %q: %v", raw, err)
	}
	if st.Count != 3 || st.FailingSinceSeq != 3 || st.SentAfterFailing != 1 {
		t.Errorf("stats = %+v, want count 3 (admin requests not counted), failing since 3, 1 sent after", st)
	}

	for _, bad := range []string{"mode=sideways", "mode=degrade&after=x", "mode=degrade&colour=red", "mode=throttle&status=200"} {
		if code, body := post(t, s.URL()+"/_admin/scenario?"+bad); code != 400 || !strings.Contains(body, "invalid scenario") {
			t.Errorf("POST ?%s = %d %q, want 400 naming the problem", bad, code, body)
		}
	}
	if req, _ := http.NewRequest(http.MethodDelete, s.URL()+"/_admin/scenario", nil); req != nil {
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 {
			t.Errorf("DELETE scenario = %d, want 405", resp.StatusCode)
		}
	}

	if code, _ := post(t, s.URL()+"/_admin/reset"); code != 204 {
		t.Errorf("POST reset = %d, want 204", code)
	}
	if s.Count() != 0 {
		t.Errorf("Count after admin reset = %d, want 0", s.Count())
	}
}

func TestAdminEndpointIsOffByDefault(t *testing.T) {
	s := start(t, Config{})
	if code, _ := post(t, s.URL()+"/_admin/scenario?mode=degrade"); code != 404 {
		t.Errorf("admin on a store without Admin = %d, want 404", code)
	}
	if s.Scenario().Mode != Healthy || s.Count() != 1 {
		t.Errorf("scenario %v, count %d; want healthy and the request counted as a page", s.Scenario(), s.Count())
	}
}
