package redis

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

// replyCutter is a TCP proxy in front of Redis that, once, lets a command
// containing match reach Redis and closes the client's connection instead
// of passing its answer on: the command ran, its answer was lost, as when
// Redis is killed between the two or the network drops. go-redis then
// sends the command again on another connection by itself (MaxRetries),
// under every hook.
type replyCutter struct {
	ln     net.Listener
	target string
	match  []byte
	cut    atomic.Bool
	wg     sync.WaitGroup
}

func newReplyCutter(t *testing.T, target string, match []byte) *replyCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyCutter{ln: ln, target: target, match: match}
	p.wg.Go(p.serve)
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *replyCutter) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.pipe(c) })
	}
}

func (p *replyCutter) pipe(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	var armed atomic.Bool // this connection carried the command to cut
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer server.Close() // the client went: so does its Redis side
		buf := make([]byte, 64<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if !p.cut.Load() && bytes.Contains(buf[:n], p.match) && p.cut.CompareAndSwap(false, true) {
					armed.Store(true)
				}
				if _, werr := server.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && armed.Load() {
			client.Close() // the answer never arrives
			break
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	server.Close()
	<-done
}

// A claim that ran in Redis but whose answer was lost is sent again by
// go-redis itself, below every hook, with the same token: it must hand out
// the job the first run leased, not lease a second one that would wait
// out the visibility timeout unseen (a minute in productcrawl) and be
// fetched after it — or twice.
func TestAClaimRetriedByTheClientLeasesOneJob(t *testing.T) {
	base, prefix := redistest.New(t)
	opts := *base.Options()
	cutter := newReplyCutter(t, opts.Addr, []byte(scriptClaim.Hash()))
	opts.Addr = cutter.ln.Addr().String()
	client := goredis.NewClient(&opts)
	defer client.Close()
	requireOneJobAfterALostClaim(t, client, base, prefix, cutter.cut.Load)
}

// leasedJobs reads a shard's leases: job → token, without the claims'
// index ('@' .. token → job).
func leasedJobs(ctx context.Context, c *goredis.Client, key string) (map[string]string, error) {
	all, err := c.HGetAll(ctx, key).Result()
	for k := range all {
		if strings.HasPrefix(k, "@") {
			delete(all, k)
		}
	}
	return all, err
}

// The claims' index ('@' .. token in leases) lives as long as the lease:
// every way a lease ends (Ack, Fail, Park, its expiry) takes it away, so
// a crawl's leases hash holds one entry per job in flight and one per
// claim holding it, and no claim's retry can get back a job it lost.
func TestALeaseEndingLeavesNoClaimBehind(t *testing.T) {
	client, prefix := redistest.New(t)
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	q, err := newQueue(client, "crawl-1", Config{Namespace: prefix, Clock: clk, VisibilityTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var jobs []*queueJob
	for _, id := range []string{"ack", "fail", "park", "expire"} {
		jobs = append(jobs, &queueJob{ID: id, URL: "http://shop.test/" + id, MaxAttempts: 3})
	}
	if _, err := q.Enqueue(ctx, jobs...); err != nil {
		t.Fatal(err)
	}
	held := map[string]*queueJob{}
	for range jobs {
		j, err := q.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held[j.ID] = j
	}
	key := q.shards[0][keyLeases]
	if all, err := client.HGetAll(ctx, key).Result(); err != nil || len(all) != 2*len(jobs) {
		t.Fatalf("leases %v (%v): want a job → token and a claim → job entry for each of %d jobs", all, err, len(jobs))
	}
	if err := q.Ack(ctx, held["ack"]); err != nil {
		t.Fatal(err)
	}
	if err := q.Fail(ctx, held["fail"], errors.New("503")); err != nil {
		t.Fatal(err)
	}
	if err := q.Park(ctx, held["park"], clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	if n, err := q.Reclaim(ctx); err != nil || n != 1 {
		t.Fatalf("reclaimed %d (%v), want the expired job", n, err)
	}
	all, err := client.HGetAll(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	for k := range all {
		if strings.HasPrefix(k, "@") {
			t.Fatalf("leases %v: a claim whose lease ended is still indexed", all)
		}
	}
	// The expired claim's retry gets another job, not the one it lost.
	token := held["expire"].lease
	at := -1
	j, err := q.claim(ctx, token, &at)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := q.Stats(ctx); err != nil || st.InFlight != 1 {
		t.Fatalf("stats %+v (%v) after a late claim retry: want the one job it leased", st, err)
	}
	t.Logf("a late retry of the expired claim leased %s", j.ID)
}
