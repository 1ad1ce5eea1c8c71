package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// bin is the productcrawl binary, built once per test run by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "productcrawl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "productcrawl")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building productcrawl:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	redistest.Stop() // the redis-server the -redis tests may have started
	os.RemoveAll(dir)
	os.Exit(code)
}

// runTimeout bounds every run of the binary.
const runTimeout = 60 * time.Second

// result is one run of the binary.
type result struct {
	code   int
	stdout string
	stderr string
	dir    string // the working directory, holding products.jsonl
}

// crawlCmd returns the binary's command with args, run in a fresh
// directory, bounded by runTimeout.
func crawlCmd(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return crawlCmdIn(t, t.TempDir(), args...)
}

// crawlCmdIn is crawlCmd in the directory dir: runs that resume one
// another share their checkpoint and output there.
func crawlCmdIn(t *testing.T, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// runCrawl runs the binary to its end.
func runCrawl(t *testing.T, args ...string) result {
	t.Helper()
	return runCrawlIn(t, t.TempDir(), args...)
}

// runCrawlIn runs the binary to its end in dir.
func runCrawlIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd, stdout, stderr := crawlCmdIn(t, dir, args...)
	err := cmd.Run()
	return finish(t, cmd, err, stdout, stderr)
}

func finish(t *testing.T, cmd *exec.Cmd, err error, stdout, stderr *bytes.Buffer) result {
	t.Helper()
	r := result{stdout: stdout.String(), stderr: stderr.String(), dir: cmd.Dir}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		r.code = exit.ExitCode()
	default:
		t.Fatalf("productcrawl did not exit by itself: %v\nstderr:\n%s", err, r.stderr)
	}
	return r
}

// jsonReport is the --report json output. The outcome's states are read
// as text.
type jsonReport struct {
	Outcome struct {
		State    string   `json:"state"`
		Reason   string   `json:"reason"`
		Domains  []string `json:"domains"`
		Records  int64    `json:"records"`
		Findings []struct {
			State   string   `json:"state"`
			Kind    string   `json:"kind"`
			Reason  string   `json:"reason"`
			Domains []string `json:"domains"`
		} `json:"findings"`
	} `json:"outcome"`
	ExitCode int             `json:"exit_code"`
	Domains  []report.Domain `json:"domains"`
	Total    report.Domain   `json:"total"`
}

func (r result) report(t *testing.T) jsonReport {
	t.Helper()
	var rep jsonReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return rep
}

func (rep jsonReport) domain(t *testing.T, host string) report.Domain {
	t.Helper()
	for _, d := range rep.Domains {
		if d.Domain == host {
			return d
		}
	}
	t.Fatalf("no line for %s in the report: %+v", host, rep.Domains)
	return report.Domain{}
}

func (rep jsonReport) hasFinding(kind, domain string) bool {
	for _, f := range rep.Outcome.Findings {
		if f.Kind == kind && (domain == "" || strings.Contains(strings.Join(f.Domains, " "), domain)) {
			return true
		}
	}
	return false
}

// product is one JSON line, checked.
type product struct {
	URL, Title, Price string
	N                 int
	FetchedAt         time.Time
}

// products reads the JSON lines file and checks every line: exactly the
// keys url, title, price, fetched_at, a product URL of one of the stores,
// the title and price that product shows, no URL twice.
func products(t *testing.T, path string, stores ...*testserver.Store) []product {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []product
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not a JSON object of strings: %v", sc.Text(), err)
		}
		if len(m) != 4 {
			t.Fatalf("line %q: want exactly url, title, price, fetched_at", sc.Text())
		}
		p := product{URL: m["url"], Title: m["title"], Price: m["price"]}
		if p.FetchedAt, err = time.Parse(time.RFC3339Nano, m["fetched_at"]); err != nil {
			t.Fatalf("line %q: fetched_at: %v", sc.Text(), err)
		}
		var store *testserver.Store
		for _, s := range stores {
			if strings.HasPrefix(p.URL, s.URL()+"/products/sku-") {
				store = s
			}
		}
		if store == nil {
			t.Fatalf("line %q: not a product URL of the stores crawled", sc.Text())
		}
		if p.N, err = strconv.Atoi(strings.TrimPrefix(p.URL, store.URL()+"/products/sku-")); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if p.Title != testserver.Title(p.N) || p.Price != testserver.Price(p.N) {
			t.Fatalf("line %q: want title %q and price %q", sc.Text(), testserver.Title(p.N), testserver.Price(p.N))
		}
		if seen[p.URL] {
			t.Fatalf("%s written twice", p.URL)
		}
		seen[p.URL] = true
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func startStore(t *testing.T, cfg testserver.Config) *testserver.Store {
	t.Helper()
	s, err := testserver.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// healthyProducts returns the URLs of the product pages the store served
// healthy.
func healthyProducts(s *testserver.Store) map[string]bool {
	out := map[string]bool{}
	for _, h := range s.Requests() {
		if h.Mode == testserver.Healthy && h.Status == 200 && strings.HasPrefix(h.Path, "/products/") {
			out[s.URL()+h.Path] = true
		}
	}
	return out
}

func urls(ps []product) map[string]bool {
	out := map[string]bool{}
	for _, p := range ps {
		out[p.URL] = true
	}
	return out
}
