package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the command and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var storeLine = regexp.MustCompile(`(?m)^store (\d+)  (http://127\.0\.0\.1:\d+)  (\S+)$`)

func TestRunServesStoresUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-stores", "3", "-products", "10", "-store", "healthy", "-store", "degrade:after=1"}, &out, &errOut)
	}()

	var lines [][]string
	deadline := time.Now().Add(5 * time.Second)
	for len(lines) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no store URLs printed; stdout %q stderr %q", out.String(), errOut.String())
		}
		time.Sleep(time.Millisecond)
		lines = storeLine.FindAllStringSubmatch(out.String(), -1)
	}
	if lines[0][3] != "healthy" || lines[1][3] != "degrade:after=1" || lines[2][3] != "healthy" {
		t.Errorf("scenarios printed: %q %q %q", lines[0][3], lines[1][3], lines[2][3])
	}

	c := &http.Client{Timeout: 5 * time.Second}
	status := func(url string) int {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(lines[1][2] + "/products/sku-10"); got != 200 {
		t.Errorf("store 2 first request = %d, want 200", got)
	}
	if got := status(lines[1][2] + "/"); got != 503 {
		t.Errorf("store 2 second request = %d, want 503", got)
	}
	if got := status(lines[0][2] + "/products/sku-11"); got != 404 {
		t.Errorf("store 1 product 11 of 10 = %d, want 404", got)
	}
	resp, err := c.Post(lines[0][2]+"/_admin/scenario?mode=gone&status=410", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := status(lines[0][2] + "/"); got != 410 {
		t.Errorf("store 1 after admin switch = %d, want 410", got)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after cancel, want 0; stderr %q", code, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if !strings.Contains(out.String(), "store 2  2 requests, first failure at request 2, 1 sent from it on") {
		t.Errorf("summary missing from stdout:\n%s", out.String())
	}
}

func TestRunRejectsBadFlagsWithUsageExit(t *testing.T) {
	cases := [][]string{
		{"-store", "sideways"},
		{"-store", "degrade:after=-1"},
		{"-stores", "1", "-store", "healthy", "-store", "degrade"},
		{"-products", "-5"},
		{"-per-page", "0"},
		{"-listen", "0.0.0.0:0"},
		{"-listen", "nonsense"},
		{"-nosuchflag"},
		{"-proxy", "sideways"},
		{"-proxy", "refuse:after=-1"},
		{"-proxies", "-1"},
		{"-proxies", "1", "-proxy", "healthy", "-proxy", "block403"},
		{"stray"},
	}
	for _, args := range cases {
		var out, errOut syncBuffer
		if code := run(context.Background(), args, &out, &errOut); code != exitUsage {
			t.Errorf("run %q = %d, want %d; stderr %q", args, code, exitUsage, errOut.String())
		}
		if errOut.String() == "" {
			t.Errorf("run %q printed no reason", args)
		}
	}
}

func TestRunHelpDocumentsFlagsAndScenarios(t *testing.T) {
	var out, errOut syncBuffer
	if code := run(context.Background(), []string{"-h"}, &out, &errOut); code != exitOK {
		t.Fatalf("-h exit %d, want 0", code)
	}
	for _, want := range []string{"-stores", "-store", "-products", "-listen", "-allow-remote", "-admin",
		"degrade", "ratelimit", "after=N", "/_admin/scenario", "SIGINT",
		"-proxy", "-proxies", "block403", "badgateway", "delay=D"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestStoreAddrsGivesConsecutivePorts(t *testing.T) {
	got, err := storeAddrs("127.0.0.1:9000", 3)
	if err != nil || strings.Join(got, " ") != "127.0.0.1:9000 127.0.0.1:9001 127.0.0.1:9002" {
		t.Errorf("storeAddrs = %v, %v", got, err)
	}
	got, err = storeAddrs("127.0.0.1:0", 2)
	if err != nil || strings.Join(got, " ") != "127.0.0.1:0 127.0.0.1:0" {
		t.Errorf("storeAddrs = %v, %v", got, err)
	}
	if _, err := storeAddrs("127.0.0.1:65535", 2); err == nil {
		t.Error("storeAddrs accepted ports past 65535")
	}
}

var proxyLine = regexp.MustCompile(`(?m)^proxy (\d+)  (http://127\.0\.0\.1:\d+)  (\S+)$`)

// With -proxy the command runs proxies to its stores, each degrading by
// its scenario, and reports what each received.
func TestRunServesProxiesToTheStores(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-products", "5", "-proxies", "3", "-proxy", "block403", "-proxy", "badgateway:after=1"}, &out, &errOut)
	}()
	var stores, proxies [][]string
	deadline := time.Now().Add(5 * time.Second)
	for len(stores) < 1 || len(proxies) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no URLs printed; stdout %q stderr %q", out.String(), errOut.String())
		}
		time.Sleep(time.Millisecond)
		stores = storeLine.FindAllStringSubmatch(out.String(), -1)
		proxies = proxyLine.FindAllStringSubmatch(out.String(), -1)
	}
	if proxies[0][3] != "block403" || proxies[1][3] != "badgateway:after=1" || proxies[2][3] != "healthy" {
		t.Errorf("proxy scenarios printed: %q %q %q", proxies[0][3], proxies[1][3], proxies[2][3])
	}
	status := func(proxyURL, target string) int {
		pu, err := url.Parse(proxyURL)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(target)
		if err != nil {
			t.Fatalf("GET %s via %s: %v", target, proxyURL, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	page := stores[0][2] + "/products/sku-1"
	for i, want := range []int{403, 200, 502, 200} {
		if got := status(proxies[[]int{0, 1, 1, 2}[i]][2], page); got != want {
			t.Errorf("request %d = %d, want %d", i+1, got, want)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after cancel, want 0; stderr %q", code, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	for _, want := range []string{"store 1  2 requests", "proxy 1  1 request, 0 forwarded", "proxy 2  2 requests, 1 forwarded",
		"proxy 3  1 request, 1 forwarded"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
