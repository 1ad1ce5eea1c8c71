package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
)

// Colly reads a URL with the WHATWG parser: an internationalised name
// becomes its ASCII (xn--) form, an IPv4 address written in hex or octal
// becomes dotted decimal, a scheme's default port is dropped. productcrawl
// must key its allowed domains, limit rules and breakers on that host, or
// Colly refuses the start URL ("Forbidden domain") or puts it under the
// shared catch-all limit rule.
func TestStartHostsAreTheHostsCollySees(t *testing.T) {
	for _, tc := range []struct{ raw, host string }{
		{"http://bücher.example/", "xn--bcher-kva.example"},
		{"http://BÜCHER.Example/katalog", "xn--bcher-kva.example"},
		{"http://0x7f.0.0.1:8080/", "127.0.0.1:8080"},
		{"http://2130706433:8080/", "127.0.0.1:8080"},
		{"http://h:80/", "h"},
		{"https://h:443/", "h"},
		{"https://h:80/", "h:80"},
		{"http://Shop.Example:8080/a", "shop.example:8080"},
		{"http://[0:0::1]:8080/", "[::1]:8080"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			cfg, err := parseConfig([]string{tc.raw}, io.Discard)
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			// What Colly sees, with no network: the request is stopped
			// in OnRequest, after every check Colly makes at Visit.
			c := colly.NewCollector()
			c.AllowedDomains = cfg.startDomain
			var seen string
			c.OnRequest(func(r *colly.Request) { seen = r.URL.Host; r.Abort() })
			if err := c.Visit(tc.raw); err != nil {
				t.Fatalf("Colly with productcrawl's allowed domains %q refuses the start URL: %v", cfg.startDomain, err)
			}
			if seen != tc.host {
				t.Fatalf("Colly sees the host %q, the test expects %q", seen, tc.host)
			}
			if !slices.Equal(cfg.startHosts, []string{tc.host}) {
				t.Errorf("start hosts %q, want [%q], the host Colly sends to (its limit rule and breaker key)", cfg.startHosts, tc.host)
			}
			// The first rule that matches is the one Colly applies: the
			// start host's own, not the shared catch-all.
			rules := limitRules(cfg)
			for _, r := range rules {
				if err := r.Init(); err != nil {
					t.Fatal(err)
				}
			}
			if !rules[0].Match(seen) {
				t.Errorf("the start host's limit rule %q does not match %q: the host falls into the shared catch-all", rules[0].DomainRegexp, seen)
			}
		})
	}
}

// The same end to end: a start URL naming 127.0.0.1 in hex crawls the
// store on 127.0.0.1, and a profiles file naming the host that way gives
// the domain its profile.
func TestStartURLInAnotherSpellingOfTheHostCrawls(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	store := startStore(t, testserver.Config{Products: 20, PerPage: 10})
	port := strings.TrimPrefix(store.Host(), "127.0.0.1:")
	hex := "0x7f.0.0.1:" + port
	dir := t.TempDir()
	yaml := fmt.Sprintf("domains:\n  %q: conservative\n", hex)
	if err := os.WriteFile(filepath.Join(dir, "profiles.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCrawlIn(t, dir, "--report", "json", "--profiles", "profiles.yaml", "http://"+hex+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (complete)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	d := r.report(t).domain(t, store.Host())
	if d.Records != 20 || d.Profile != "conservative" {
		t.Errorf("domain %+v: want 20 records under the file's conservative profile", d)
	}
	if ps := products(t, filepath.Join(dir, "products.jsonl"), store); len(ps) != 20 {
		t.Errorf("%d products written, want 20", len(ps))
	}

	// A crawl in Redis filters the hosts it queues itself: the same.
	sc := newSharedCrawl(t)
	r = runCrawl(t, sc.args("http://"+hex+"/")...)
	if r.code != 0 {
		t.Fatalf("-redis: exit %d, want 0 (complete)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if d := r.report(t).domain(t, store.Host()); d.Records != 20 {
		t.Errorf("-redis: domain %+v: want 20 records", d)
	}
}

// A profiles file's exact host reaches the host Colly sees for it.
func TestProfilePatternsAlsoNameTheHostsCollySees(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		also    []string
	}{
		{"shop.example", nil},
		{"shop.example:8080", nil},
		{".example.org", nil},
		{"h:80", []string{"h"}},  // http://h:80/ is h; https://h:80/ keeps the port
		{"h:443", []string{"h"}}, // https://h:443/ is h
		{"0x7f.0.0.1:8080", []string{"127.0.0.1:8080"}},
		{"[0:0::1]:8080", []string{"[::1]:8080"}},
	} {
		if got := collyHosts(tc.pattern); !slices.Equal(got, tc.also) {
			t.Errorf("collyHosts(%q) = %q, want %q", tc.pattern, got, tc.also)
		}
	}
}
