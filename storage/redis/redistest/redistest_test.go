package redistest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestNewGivesWorkingClientAndUniquePrefix(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c1, p1 := redistest.New(t)
	c2, p2 := redistest.New(t)
	if p1 == p2 {
		t.Fatalf("two calls gave the same prefix %q", p1)
	}
	if !strings.HasPrefix(p1, "bwtest:testnewgivesworkingclientanduniqueprefix:") {
		t.Errorf("prefix %q does not name the test", p1)
	}
	if err := c1.Set(ctx, p1+":k", "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := c2.Get(ctx, p1+":k").Result()
	if err != nil || got != "v1" {
		t.Fatalf("second client reads %q, %v; want v1 (same server)", got, err)
	}
	if b := redistest.Backend(); b == "" {
		t.Error("Backend() is empty after New")
	} else {
		t.Logf("backend: %s", b)
	}
}

func TestCleanupDeletesOnlyThePrefixKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	outer, outerPrefix := redistest.New(t)
	keep := outerPrefix + ":keep"
	if err := outer.Set(ctx, keep, "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var inner string
	t.Run("inner", func(t *testing.T) {
		c, prefix := redistest.New(t)
		inner = prefix
		for i := range 2500 { // more than one SCAN page
			if err := c.Set(ctx, fmt.Sprintf("%s:k%d", prefix, i), i, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	var all []string
	var cursor uint64
	for {
		keys, next, err := outer.Scan(ctx, cursor, inner+"*", 1000).Result()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, keys...)
		if next == 0 {
			break
		}
		cursor = next
	}
	if len(all) != 0 {
		t.Errorf("%d keys under %q survived the inner test's cleanup", len(all), inner)
	}
	if n, err := outer.Exists(ctx, keep).Result(); err != nil || n != 1 {
		t.Errorf("the outer test's key was touched: exists=%d err=%v", n, err)
	}
}

func TestClientIsSeparateConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c1, _ := redistest.New(t)
	c2 := redistest.Client(t)
	id1, err := c1.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	id2, err := c2.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if id1 == id2 {
		t.Errorf("both clients use connection %d", id1)
	}
}
