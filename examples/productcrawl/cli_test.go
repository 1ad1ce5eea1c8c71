package main

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/testserver"
)

func TestVersionPrintsTheBuildAndExitsZero(t *testing.T) {
	r := runCrawl(t, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "productcrawl ") || !strings.Contains(r.stdout, " go1.") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q: want 0 and one line naming productcrawl's build and Go version", r.code, r.stdout)
	}
}

func TestHelpSaysMetricsOnLoopbackAndTheNewFlags(t *testing.T) {
	r := runCrawl(t, "-h")
	for _, want := range []string{"127.0.0.1:9090", "-user-agent", "-max-depth", "-version", "-redis-purge", ".csv", "-obey-robots", "-max-crawl-delay", "no start\n                URL reachable"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// Every request carries the --user-agent given.
func TestUserAgentIsSentOnEveryRequest(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><body><ul class="products"></ul></body></html>`))
	}))
	defer srv.Close()
	const ua = "PoliteBot/1.0 (+https://example.org/bot)"
	r := runCrawl(t, "--user-agent", ua, "--min-bytes", "0", srv.URL+"/")
	mu.Lock()
	defer mu.Unlock()
	if r.code != 3 || len(agents) != 1 || agents[0] != ua {
		t.Fatalf("exit %d, agents %q: want one request with %q, an empty run (3)\n%s", r.code, agents, ua, r.stderr)
	}
	if r := runCrawl(t, "--user-agent", "a\nb", srv.URL+"/"); r.code != 64 {
		t.Errorf("a user agent with a newline: exit %d, want 64", r.code)
	}
}

// --max-depth 1 fetches the start URL only; 2 also what it links to.
func TestMaxDepthBoundsTheLinksFollowed(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 20, PerPage: 5})
	for depth, want := range map[string]int{"1": 1, "2": 7} { // the listing, its 5 products and its next page
		store.Reset()
		r := runCrawl(t, "--max-depth", depth, "--log-level", "warn", store.URL()+"/")
		if store.Count() != want {
			t.Errorf("--max-depth %s: %d requests, want %d (exit %d)\n%s", depth, store.Count(), want, r.code, r.stderr)
		}
	}
	if r := runCrawl(t, "--max-depth", "-1", store.URL()+"/"); r.code != 64 {
		t.Errorf("--max-depth -1: exit %d, want 64", r.code)
	}
}

// --out x.csv writes CSV under a header row; a resumed run appends to it
// without a second header, a URL twice or a torn row left by a crash; a
// CSV of other columns is refused before anything is sent.
func TestOutCSVWritesAHeaderAndOneRowARecord(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 8, PerPage: 8})
	dir := t.TempDir()
	path := filepath.Join(dir, "p.csv")
	read := func() [][]string {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	r := runCrawlIn(t, dir, "--out", "p.csv", "--resume", "--log-level", "warn", store.URL()+"/")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.stderr)
	}
	rows := read()
	if len(rows) != 9 || strings.Join(rows[0], ",") != "url,title,price,fetched_at" {
		t.Fatalf("rows %q: want the header and 8 products", rows)
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		n := 0
		for i := 1; i <= 8; i++ {
			if row[0] == store.ProductURL(i) {
				n = i
			}
		}
		if n == 0 || seen[row[0]] || row[1] != testserver.Title(n) || row[2] != testserver.Price(n) {
			t.Fatalf("row %q: want a product URL once, with its title and price", row)
		}
		seen[row[0]] = true
		if _, err := time.Parse(time.RFC3339Nano, row[3]); err != nil {
			t.Errorf("row %q: fetched_at: %v", row, err)
		}
	}

	// A crash mid-row, then a resume: the torn row is cut, nothing doubled.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(store.ProductURL(1) + ",Torn")
	f.Close()
	if r := runCrawlIn(t, dir, "--out", "p.csv", "--resume", "--log-level", "warn", store.URL()+"/"); r.code != 0 {
		t.Fatalf("resumed: exit %d\n%s", r.code, r.stderr)
	}
	if again := read(); len(again) != 9 || strings.Join(again[0], ",") != "url,title,price,fetched_at" {
		t.Fatalf("after the resume, rows %q: want the same header and 8 products", again)
	}

	before := store.Count()
	r = runCrawlIn(t, dir, "--out", "p.csv", "--field", "name=h1", "--checkpoint", "other.db", store.URL()+"/")
	if r.code != 64 || store.Count() != before || !strings.Contains(r.stderr, "CSV columns") {
		t.Errorf("other columns into the same CSV: exit %d, %d requests sent; want 64, none\n%s", r.code, store.Count()-before, r.stderr)
	}
}

// --redis-purge deletes every key of the crawl, and only those.
func TestRedisPurgeDeletesTheCrawlsKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	sc := newSharedCrawl(t)
	store := startStore(t, testserver.Config{Products: 5, PerPage: 5})
	if r := runCrawl(t, sc.args(store.URL()+"/")...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys := func(id string) []string {
		k, err := sc.client.Keys(ctx, redis.DefaultNamespace+":{"+id+"}:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	other := sc.id + "-other"
	if err := sc.client.Set(ctx, redis.DefaultNamespace+":{"+other+"}:q:jobs", "x", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	defer sc.client.Del(ctx, redis.DefaultNamespace+":{"+other+"}:q:jobs")
	n := len(keys(sc.id))
	if n == 0 {
		t.Fatal("the crawl left no keys to purge")
	}
	r := runCrawl(t, "--redis", sc.url, "--crawl-id", sc.id, "--redis-purge")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "deleted ") || len(keys(sc.id)) != 0 || len(keys(other)) != 1 {
		t.Fatalf("purge: exit %d, stdout %q, %d keys left of %d, other crawl's %d: want 0, every key of this crawl gone, the other's kept\n%s",
			r.code, r.stdout, len(keys(sc.id)), n, len(keys(other)), r.stderr)
	}
	if r := runCrawl(t, "--redis-purge", store.URL()+"/"); r.code != 64 {
		t.Errorf("--redis-purge without -redis: exit %d, want 64", r.code)
	}
}
