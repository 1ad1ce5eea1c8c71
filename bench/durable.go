package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breakwater-crawl/breakwater/testserver"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// durableGoal: the recommended wiring with its durable checkpoint gets at
// least this many pages per CPU-second (the Go process and Redis) as the
// anchor, judged on the median of the rounds' ratios.
const durableGoal = 1.2

// anchorClient names the durable scenario's anchor in its rows.
const anchorClient = "colly-queue-redis"

// runDurable: what a resumable crawl costs. The recommended Breakwater
// wiring (as the overhead scenario builds it: validator, breaker with
// pacing of 2, the checkpoint on storage/bolt, a file) against what a Colly
// user who wants a crawl to survive a restart has today: Colly's queue and
// storage on Redis (collyRedisStorage, redisstorage's commands), a
// synchronous collector driven by the queue's threads (2 per store, one
// LimitRule of 2 per store). Both crawl the overhead scenario's stores.
// Measured: the CPU time per page of the Go process plus the Redis
// server's (INFO cpu, read before and after each crawl, for both sides).
func runDurable(e *env) ([]Result, error) {
	rs, err := findRedis(e.tmp)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	z := e.size
	stores := make([]*cachedStore, z.overheadStores)
	for i := range stores {
		s, err := startCachedStore(z.overheadPerStore)
		if err != nil {
			return nil, fmt.Errorf("durable: start a store: %w", err)
		}
		defer s.Close()
		stores[i] = s
	}
	urls := interleave(stores, z.overheadPerStore)
	hosts := hostsOf(stores)
	pages := len(urls)
	e.say("%-14s Redis: %s", "durable", rs.where)

	info := rs.client()
	defer info.Close()
	ctx := context.Background()
	prefix := fmt.Sprintf("breakwater-bench:durable:%d-%d", os.Getpid(), time.Now().UnixNano())

	const anchor, bwRow = 0, 1
	rows := []Result{
		{Scenario: "durable", Client: anchorClient, Pages: pages, IntoFailure: -1},
		{Scenario: "durable", Client: breakwater.String(), Pages: pages, IntoFailure: -1},
	}
	redisCPU := make([][]float64, 2) // µs of Redis CPU a page, per round
	redisCmds := make([][]float64, 2)
	// Every key under prefix goes at the end, whatever happens; each
	// round's keys as soon as the round is measured.
	drop := func(p string) error { return newCollyRedisStorage(info, p).clear(ctx) }
	defer func() { _ = drop(prefix) }()
	// One anchor crawl not counted: it opens the process's first crawl
	// (heap, stacks, Redis connections).
	if _, err := anchorCrawl(e, rs, prefix+":warm-up", urls, hosts); err != nil {
		return nil, fmt.Errorf("durable, warm-up: %w", err)
	}
	if err := drop(prefix + ":warm-up"); err != nil {
		return nil, fmt.Errorf("durable: %w", err)
	}
	for round := range z.overheadRounds {
		for j := range 2 {
			i := (j + round) % 2
			before := total(stores)
			u0, err := redisUsageOf(ctx, info)
			if err != nil {
				return nil, fmt.Errorf("durable: %w", err)
			}
			cpu0, cpuOK := processCPU()
			var st crawlStats
			if i == anchor {
				st, err = anchorCrawl(e, rs, fmt.Sprintf("%s:%d", prefix, round), urls, hosts)
			} else {
				spec := crawlSpec{client: breakwater, urls: urls, timeout: defaultTimeout, limits: perHost, hosts: hosts,
					backoff: e.backoff(), cap: e.cap, log: e.log, checkpoint: filepath.Join(e.tmp, fmt.Sprintf("durable-%d.db", round))}
				st, err = crawl(spec)
				_ = os.Remove(spec.checkpoint)
			}
			cpu1, _ := processCPU()
			u1, uerr := redisUsageOf(ctx, info)
			if err != nil {
				return nil, fmt.Errorf("durable, %s: %w", rows[i].Client, err)
			}
			if uerr != nil {
				return nil, fmt.Errorf("durable: %w", uerr)
			}
			if err := drop(fmt.Sprintf("%s:%d", prefix, round)); err != nil {
				return nil, fmt.Errorf("durable: %w", err)
			}
			r := &rows[i]
			pps := float64(st.saved) / st.wall.Seconds()
			r.Rounds = append(r.Rounds, pps)
			n := time.Duration(max(st.saved, 1))
			goCPU, redis := cpu1-cpu0, u1.cpu-u0.cpu
			cpuRound := 0.0
			if cpuOK && st.saved > 0 {
				cpuRound = us((goCPU + redis) / n)
				if r.CPUPerPage == 0 || Duration((goCPU+redis)/n) < r.CPUPerPage {
					r.CPUPerPage = Duration((goCPU + redis) / n)
				}
			}
			r.CPURounds = append(r.CPURounds, cpuRound)
			redisCPU[i] = append(redisCPU[i], us(redis/n))
			// The two INFO calls of the reading before are counted after it.
			redisCmds[i] = append(redisCmds[i], float64(u1.commands-u0.commands-2)/float64(n))
			if pps > r.PagesPerSec {
				r.PagesPerSec, r.Saved, r.Wall, r.Requests = pps, st.saved, Duration(st.wall), total(stores)-before
				if st.w != nil {
					r.CheckpointDone = st.w.cpDone
				}
			}
			r.Cut = r.Cut || st.cut
			e.say("%-14s %-17s round %d: %d pages in %v, %.0f pages/s; a page: %.0f µs CPU (Go %.0f, Redis %.1f), %.2f Redis commands", "durable", r.Client, round+1,
				st.saved, st.wall.Round(time.Millisecond), pps, us((goCPU+redis)/n), us(goCPU/n), us(redis/n), redisCmds[i][len(redisCmds[i])-1])
		}
	}
	for i := range rows {
		r := &rows[i]
		w := spreadOf(roundRatios(r.Rounds, rows[anchor].Rounds, false))
		c := spreadOf(roundRatios(r.CPURounds, rows[anchor].CPURounds, true))
		r.WallRatio, r.CPURatio, r.Ratio = &w, &c, c.Median
		rcpu, rcmds := medianOf(redisCPU[i]), medianOf(redisCmds[i])
		r.RedisCPUPerPage, r.RedisCommandsPerPage = &rcpu, &rcmds
		r.CPUPerPageMedian = spreadOf(r.CPURounds).Median
		r.Measured = fmt.Sprintf("pages per CPU-second %s the anchor's, pages/s %s; CPU/page (Go + Redis) median %.0f µs, least %.0f µs, of it Redis %.1f µs (%.2f commands a page)",
			r.CPURatio, r.WallRatio, r.CPUPerPageMedian, us(time.Duration(r.CPUPerPage)), rcpu, rcmds)
		if i == anchor {
			r.Measured = "the anchor: " + r.Measured
		}
		if r.CheckpointDone > 0 {
			r.Measured += fmt.Sprintf("; checkpoint: %d done", r.CheckpointDone)
		}
	}
	bw := &rows[bwRow]
	bw.Goal = &Goal{
		Text:     fmt.Sprintf("breaker + validation + durable checkpoint get ≥ %.1f× the pages per CPU-second (Go process + Redis) of Colly's queue and storage on Redis", durableGoal),
		Met:      bw.Ratio >= durableGoal && bw.Saved == pages && rows[anchor].Saved == pages,
		Measured: fmt.Sprintf("%.3f× (median of %d rounds; %.0f against %.0f µs CPU a page)", bw.Ratio, len(bw.CPURounds), bw.CPUPerPageMedian, rows[anchor].CPUPerPageMedian),
	}
	if err := drop(prefix); err != nil {
		return nil, fmt.Errorf("durable: %w", err)
	}
	return rows, nil
}

// anchorCrawl is the user's code for a resumable crawl with Colly today:
// a synchronous collector whose visited set and cookies are in Redis, and
// a queue in Redis whose threads drive it. Its keys are under prefix; the
// caller deletes them, outside what it measures.
func anchorCrawl(e *env, rs *redisServer, prefix string, urls, hosts []string) (crawlStats, error) {
	labelled := pprof.WithLabels(context.Background(), pprof.Labels("client", anchorClient))
	pprof.SetGoroutineLabels(labelled)
	serverLabels.Store(&labelled)
	defer pprof.SetGoroutineLabels(context.Background())

	client := rs.client()
	defer client.Close()
	store := newCollyRedisStorage(client, prefix)

	start := time.Now()
	c := colly.NewCollector()
	c.SetRequestTimeout(defaultTimeout)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	c.WithTransport(tr)
	if err := limitRules(c, &crawlSpec{limits: perHost, hosts: hosts}); err != nil {
		return crawlStats{}, err
	}
	if err := c.SetStorage(store); err != nil {
		return crawlStats{}, err
	}
	q, err := queue.New(len(hosts)*parallelism, store)
	if err != nil {
		return crawlStats{}, err
	}
	var mu sync.Mutex
	saved := make(map[string]struct{}, len(urls))
	c.OnHTML(testserver.TitleSelector, func(h *colly.HTMLElement) {
		mu.Lock()
		saved[h.Request.URL.String()] = struct{}{}
		mu.Unlock()
	})
	for _, u := range urls {
		if err := q.AddURL(u); err != nil {
			return crawlStats{}, fmt.Errorf("queue %s: %w", u, err)
		}
	}
	var cut atomic.Bool
	capTimer := time.AfterFunc(e.cap, func() {
		cut.Store(true)
		q.Stop()
	})
	defer capTimer.Stop()
	if err := q.Run(c); err != nil {
		return crawlStats{}, err
	}
	wall := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	return crawlStats{wall: wall, saved: len(saved), cut: cut.Load()}, nil
}
