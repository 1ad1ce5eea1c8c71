package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// recorder is a go-redis hook that notes every command's arguments and
// answers none: no server is needed to see what would be sent.
type recorder struct{ cmds []string }

func (r *recorder) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, fmt.Errorf("the recorder dials nothing")
	}
}

func (r *recorder) ProcessHook(goredis.ProcessHook) goredis.ProcessHook {
	return func(_ context.Context, cmd goredis.Cmder) error {
		r.cmds = append(r.cmds, strings.TrimSuffix(fmt.Sprintln(cmd.Args()...), "\n"))
		return nil
	}
}

func (r *recorder) ProcessPipelineHook(goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(_ context.Context, cmds []goredis.Cmder) error {
		for _, cmd := range cmds {
			r.cmds = append(r.cmds, strings.TrimSuffix(fmt.Sprintln(cmd.Args()...), "\n"))
		}
		return nil
	}
}

// The anchor's storage sends, per call, the one command
// gocolly/redisstorage sends, on keys spelled as it spells them.
func TestTheAnchorSendsRedisstoragesCommands(t *testing.T) {
	rec := &recorder{}
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	c.AddHook(rec)
	s := newCollyRedisStorage(c, "p")
	u, _ := url.Parse("http://shop.test:8080/products/sku-1")
	for _, tc := range []struct {
		call func()
		want string
	}{
		{func() { _ = s.Init() }, "ping"},
		{func() { _ = s.Visited(7) }, "set p:request:7 1"},
		{func() { _, _ = s.IsVisited(7) }, "get p:request:7"},
		{func() { s.SetCookies(u, "a=1") }, "set p:cookie:shop.test:8080 a=1"},
		{func() { _ = s.Cookies(u) }, "get p:cookie:shop.test:8080"},
		{func() { _ = s.AddRequest([]byte("req")) }, "rpush p:queue [114 101 113]"},
		{func() { _, _ = s.GetRequest() }, "lpop p:queue"},
		{func() { _, _ = s.QueueSize() }, "llen p:queue"},
	} {
		rec.cmds = nil
		tc.call()
		if got := strings.Join(rec.cmds, "; "); got != tc.want {
			t.Errorf("sent %q, want %q", got, tc.want)
		}
	}
}

// A Redis that does not answer skips the durable scenario with a note; the
// other scenarios run.
func TestDurableIsSkippedWithoutRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	t.Setenv("REDIS_URL", "redis://"+addr+"/0")
	var log strings.Builder
	sel, err := selectScenarios("durable")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench(options{scenarios: sel, scale: 100, cap: 10 * time.Second, size: tinySize}, &log)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 0 {
		t.Errorf("%d rows from a scenario without Redis", len(rep.Results))
	}
	note := rep.Notes[len(rep.Notes)-1]
	if !strings.HasPrefix(note, "durable: SKIPPED: REDIS_URL is set, but "+addr) || !strings.Contains(log.String(), "durable skipped") {
		t.Errorf("note %q, log %q; want the reason in both", note, log.String())
	}
}
