package testserver

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestEveryPathFollowsFailureModes checks, for each mode that answers at
// once, status, body and headers on a listing page and a product page.
func TestEveryPathFollowsFailureModes(t *testing.T) {
	cases := []struct {
		sc         Scenario
		status     int
		body       []byte // nil: check size only
		minSize    int
		maxSize    int
		retryAfter string
	}{
		{sc: Scenario{Mode: Degrade}, status: 503, body: []byte{}},
		{sc: Scenario{Mode: Degrade, Status: 502}, status: 502, body: []byte{}},
		{sc: Scenario{Mode: Empty}, status: 200, body: ConsentShell(), minSize: 800, maxSize: 1000},
		{sc: Scenario{Mode: Throttle}, status: 429, retryAfter: "1"},
		{sc: Scenario{Mode: Throttle, RetryAfter: 1500 * time.Millisecond}, status: 429, retryAfter: "2"}, // rounded up
		{sc: Scenario{Mode: Throttle, RetryAfter: 30 * time.Second, Status: 503}, status: 503, retryAfter: "30"},
		{sc: Scenario{Mode: Blocked}, status: 403, body: BlockPage()},
		{sc: Scenario{Mode: Gone}, status: 404, body: NotFoundPage()},
		{sc: Scenario{Mode: Gone, Status: 410}, status: 410, body: NotFoundPage()},
	}
	for _, tc := range cases {
		t.Run(tc.sc.String(), func(t *testing.T) {
			s := start(t, Config{Scenario: tc.sc})
			for _, u := range []string{s.URL() + "/", s.ProductURL(3)} {
				code, h, body := get(t, u)
				if code != tc.status {
					t.Errorf("%s = %d, want %d", u, code, tc.status)
				}
				if tc.body != nil && !bytes.Equal(body, tc.body) {
					t.Errorf("%s body = %.60q…, want %.60q…", u, body, tc.body)
				}
				if tc.maxSize > 0 && (len(body) < tc.minSize || len(body) > tc.maxSize) {
					t.Errorf("%s body is %d bytes, want %d..%d", u, len(body), tc.minSize, tc.maxSize)
				}
				if got := h.Get("Retry-After"); got != tc.retryAfter {
					t.Errorf("%s Retry-After = %q, want %q", u, got, tc.retryAfter)
				}
				if bytes.Contains(body, []byte(`class="product"`)) {
					t.Errorf("%s failure answer carries product markup", u)
				}
			}
			if got := s.CountMode(tc.sc.Mode); got != 2 {
				t.Errorf("CountMode(%v) = %d, want 2", tc.sc.Mode, got)
			}
			if got := s.SentAfterFailing(); got != 2 {
				t.Errorf("SentAfterFailing = %d, want 2", got)
			}
		})
	}
}

func TestEmptyServesConsentShellFromRequestAfterN(t *testing.T) {
	s := start(t, Config{Scenario: Scenario{Mode: Empty, After: 30}})
	for i := 1; i <= 32; i++ {
		code, _, body := get(t, s.ProductURL(i))
		if code != 200 {
			t.Fatalf("request %d = %d, want 200", i, code)
		}
		full := len(body) > 30*1024
		if want := i <= 30; full != want {
			t.Errorf("request %d: %d bytes, full page = %v, want %v", i, len(body), full, want)
		}
	}
	if _, seq := s.FailingSince(); seq != 31 {
		t.Errorf("FailingSince seq = %d, want 31", seq)
	}
}

func TestRestyledChangesProductPagesOnly(t *testing.T) {
	s := start(t, Config{Scenario: Scenario{Mode: Restyled}})
	code, _, listing := get(t, s.URL()+"/")
	if code != 200 || !bytes.Equal(listing, ListingPage(1)) {
		t.Errorf("listing under restyled = %d, changed = %v; want 200 and unchanged", code, !bytes.Equal(listing, ListingPage(1)))
	}
	code, _, page := get(t, s.ProductURL(5))
	if code != 200 {
		t.Fatalf("product = %d, want 200", code)
	}
	if len(page) < 37*1024 {
		t.Errorf("restyled page is %d bytes, want full size (~38 KB)", len(page))
	}
	if strings.Contains(string(page), `class="product"`) || strings.Contains(string(page), `class="title"`) {
		t.Errorf("restyled page still has div.product or h1.title")
	}
	if !strings.Contains(string(page), `<h2 class="name">`+Title(5)+`</h2>`) {
		t.Errorf("restyled page lacks the product under h2.name")
	}
	if got, want := s.CountMode(Restyled), 1; got != want {
		t.Errorf("CountMode(Restyled) = %d, want %d", got, want)
	}
	if _, seq := s.FailingSince(); seq != 2 {
		t.Errorf("FailingSince seq = %d, want 2 (the product page, not the listing)", seq)
	}
}

func TestNoProductsRendersEmptyListing(t *testing.T) {
	s := start(t, Config{Products: NoProducts})
	code, _, body := get(t, s.URL()+"/")
	if code != 200 {
		t.Fatalf("/ = %d, want 200", code)
	}
	if !strings.Contains(string(body), "<ul class=\"products\">\n</ul>") {
		t.Errorf("listing has no empty ul.products:\n%s", body)
	}
	if strings.Contains(string(body), "product-link") || strings.Contains(string(body), `class="next"`) {
		t.Errorf("empty listing has product links or a next link")
	}
	if code, _, _ := get(t, s.ProductURL(1)); code != 404 {
		t.Errorf("product 1 of an empty store = %d, want 404", code)
	}
}

func TestLatencyIsRecordedAndWaited(t *testing.T) {
	s := start(t, Config{Scenario: Scenario{Latency: 15 * time.Millisecond}})
	code, _, _ := get(t, s.ProductURL(1))
	if code != 200 {
		t.Fatalf("status %d, want 200", code)
	}
	if h := s.Requests()[0]; h.Latency != 15*time.Millisecond || h.Mode != Healthy || h.Status != 200 {
		t.Errorf("hit = %+v, want 15ms latency, healthy, 200", h)
	}
}
