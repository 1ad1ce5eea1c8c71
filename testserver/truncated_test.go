package testserver

import (
	"errors"
	"io"
	"strconv"
	"testing"
)

func TestTruncatedDeclaresFullLengthAndCutsTheBody(t *testing.T) {
	cases := []struct {
		cut  int
		want func(full int) int
	}{
		{0, func(full int) int { return full / 3 }},
		{1000, func(int) int { return 1000 }},
		{1 << 20, func(full int) int { return full - 1 }},
	}
	for _, tc := range cases {
		t.Run("cut="+strconv.Itoa(tc.cut), func(t *testing.T) {
			s := start(t, Config{Scenario: Scenario{Mode: Truncated, Cut: tc.cut}})
			full := len(ProductPage(4))
			resp, err := client.Get(s.ProductURL(4))
			if err != nil {
				t.Fatalf("GET: %v", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.ContentLength != int64(full) {
				t.Errorf("status %d, Content-Length %d; want 200, %d", resp.StatusCode, resp.ContentLength, full)
			}
			body, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error = %v, want io.ErrUnexpectedEOF", err)
			}
			if want := tc.want(full); len(body) != want {
				t.Errorf("read %d bytes, want %d", len(body), want)
			}
			if string(body) != string(ProductPage(4)[:len(body)]) {
				t.Errorf("the bytes sent are not the page's start")
			}
			if h := s.Requests()[0]; h.Mode != Truncated || h.Status != 200 {
				t.Errorf("hit = %+v, want mode truncated, status 200", h)
			}
		})
	}
}
