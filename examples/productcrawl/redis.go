package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/metrics"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	goredis "github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// With -redis the crawl lives in Redis (package storage/redis) instead of
// the checkpoint file, and any number of productcrawl processes, on one
// machine or many, work it together: a worker is this program started with
// the same -redis and -crawl-id.
//
//   - The frontier is the crawl's queue in Redis, not Colly's: start URLs
//     and links are added to it (each URL once per crawl, whoever finds
//     it), and the collector, synchronous, is fed by Colly's queue over
//     the CollyStorage, -parallelism × start hosts requests at a time.
//     A job leaves the queue when its outcome says so (done, gone), goes
//     back with a backoff when it failed, to the dead letters after
//     redisMaxAttempts failures, and waits parked while its domain's
//     circuit is open. A job whose worker died comes back to the others
//     after the visibility timeout.
//   - Colly's visited set is the shared one: claiming a URL is atomic, so
//     one worker fetches each URL, and so the union of the workers' -out
//     files holds every product once. Delivery is at least once: a worker
//     killed between writing a product and settling its job leaves that
//     job to come back after the visibility timeout, and the product can
//     then be in two files (never twice in one: a worker continues its
//     -out as --resume does). A live worker keeps its jobs however long
//     they wait (storage/redis extends their leases).
//   - The circuit breakers are shared (NewBreakerStore): a trip seen by one
//     worker is seen by all, half-open probes are limited across all, and
//     an open circuit stays open in Redis for a worker started later.
//
// -redis names one server (redis://, rediss://) or a Redis Cluster by its
// seeds (redis+cluster://host:7000,host:7001,…; parseClusterURL): the worker then talks to a go-redis ClusterClient,
// which follows the cluster's redirects, and storage/redis retries a call
// the cluster turned away while it moved the crawl's slot. A crawl's keys
// share one hash tag, so one master serves one crawl, unless
// -redis-shards spreads it over several (storage/redis's Config.Shards).
//
// The checkpoint extension is not used: the queue, the visited set and the
// circuits are the crawl's state. (Over storage/redis's OpenCheckpoint its
// Register takes up what "earlier runs" left, so it would rewrite the
// records other live workers have in flight; its store error ends a run,
// where the Colly storage waits for Redis to come back; and its run
// history is read, changed and written back by each worker.)
//
// A worker runs until no job is left anywhere in the crawl, or only jobs
// that must wait beyond -wait-horizon (a tripped domain's parked URLs, a
// retry's backoff): those stay queued, the run ends tripped (exit 2), and
// the same command run again continues the crawl. Each worker's report and
// exit code speak for its own share: its records, its view of the breaker
// stats, and the crawl's queue as it left it; so a worker that found no
// work left ends empty (exit 3).
//
// Redis unreachable at start is an error (exit 1) within -timeout. During
// the crawl the worker pauses instead: the circuits fail closed (requests
// are parked, none is sent) and the queue's calls retry with a backoff;
// once Redis answers the crawl goes on. Still unreachable after
// storage/redis's max outage (10 minutes), the run ends as an error. A
// Redis that comes back without the crawl (no persistence, flushed) ends
// the run as an error too (storage/redis's ErrStateLost), never complete.

// defaultWaitHorizon is -wait-horizon's default: longer than a request
// parked while Redis was unreachable waits (the breaker store tries Redis
// again at most 15 s later, plus a tenth as jitter) and than a first
// retry's backoff (under 15 s), so a worker rides those out; shorter than
// the standard and conservative profiles' cooldowns (60 s, 300 s), so a
// trip ends the run (exit 2) as it does with the checkpoint file, and the
// next run probes the domain.
const defaultWaitHorizon = 30 * time.Second

// redisMaxAttempts is how many failed attempts a URL gets before it is a
// dead letter: as many as with the checkpoint file.
const redisMaxAttempts = checkpoint.DefaultMaxAttempts

// shared is one worker's part of a crawl in Redis.
type shared struct {
	client goredis.UniversalClient
	id     string
	cs     *redis.CollyStorage
	bs     circuit.Store
	q      *queue.Queue
	log    zerolog.Logger
}

// validateRedis checks the -redis flags and derives the crawl id. It runs
// at the end of validate.
func (cfg *Config) validateRedis() error {
	if cfg.Redis == "" {
		if cfg.crawlIDSet {
			return usageErr("-crawl-id: names a crawl in Redis; give -redis too")
		}
		if cfg.waitSet {
			return usageErr("-wait-horizon: only with -redis")
		}
		if cfg.shardsSet {
			return usageErr("-redis-shards: only with -redis")
		}
		return nil
	}
	if isClusterURL(cfg.Redis) {
		opts, err := parseClusterURL(cfg.Redis)
		if err != nil {
			return usageErr("-redis: %v", err)
		}
		opts.ContextTimeoutEnabled = true // a deadline cuts a hung connection short
		cfg.redisCluster = opts
	} else {
		opts, err := goredis.ParseURL(cfg.Redis)
		if err != nil {
			return usageErr("-redis: %v; want a URL such as redis://host:6379/0, or redis+cluster://host:7000,host:7001 for a Redis Cluster", err)
		}
		opts.ContextTimeoutEnabled = true // a deadline cuts a hung connection short
		cfg.redisOpts = opts
	}
	switch {
	case cfg.checkpointSet:
		return usageErr("-checkpoint: not with -redis: the crawl's state lives in Redis under -crawl-id")
	case cfg.Resume:
		return usageErr("--resume: not with -redis: the same command (same -redis and -crawl-id) continues the crawl by itself")
	case cfg.MaxPages > 0:
		return usageErr("-max-pages: not with -redis: the crawl is shared by its workers; stop a worker with SIGINT or SIGTERM instead")
	case cfg.MaxDepth > 0:
		return usageErr("-max-depth: not with -redis: the crawl's queue does not keep a URL's depth")
	case cfg.RedisShards < 1 || cfg.RedisShards > redis.MaxShards:
		return usageErr("-redis-shards %d: want 1 to %d", cfg.RedisShards, redis.MaxShards)
	case cfg.WaitHorizon < 0:
		return usageErr("-wait-horizon %v: want 0 or a positive duration, e.g. 2m", cfg.WaitHorizon)
	}
	id := cfg.CrawlID
	if !cfg.crawlIDSet {
		if len(cfg.URLs) == 0 {
			return nil // the demo fleet: derived once its URLs are known
		}
		id = defaultCrawlID(cfg.URLs)
	}
	if err := checkCrawlID(id); err != nil {
		return usageErr("-crawl-id: %v", err)
	}
	cfg.CrawlID = id
	return nil
}

// defaultCrawlID names the crawl of the start URLs, whatever their order:
// "productcrawl-<first host>-<hash of them all>".
func defaultCrawlID(urls []string) string {
	sorted := slices.Clone(urls)
	slices.Sort(sorted)
	h := fnv.New64a()
	for _, u := range sorted {
		io.WriteString(h, u)
		h.Write([]byte{0})
	}
	host := "start"
	if u, err := url.Parse(sorted[0]); err == nil && u.Host != "" {
		host = u.Host
	}
	var b strings.Builder
	for _, r := range strings.ToLower(host) {
		if b.Len() >= 100 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return fmt.Sprintf("productcrawl-%s-%016x", b.String(), h.Sum64())
}

// checkCrawlID applies storage/redis's rules for a crawl id, so that a bad
// one is a usage error before anything is sent.
func checkCrawlID(id string) error {
	switch {
	case id == "":
		return errors.New("empty")
	case len(id) > 200:
		return fmt.Errorf("%.40q…: longer than 200 bytes", id)
	case strings.ContainsAny(id, "{}*?[]\\ \t\r\n"):
		return fmt.Errorf("%q: must not contain braces, glob characters (*?[]\\) or spaces", id)
	}
	return nil
}

// redisAddr names the Redis of cfg for messages, without its password.
func (cfg Config) redisAddr() string {
	if o := cfg.redisCluster; o != nil {
		return "cluster " + strings.Join(o.Addrs, ",")
	}
	return fmt.Sprintf("%s db %d", cfg.redisOpts.Addr, cfg.redisOpts.DB)
}

// connectRedis makes the client (a ClusterClient for a redis+cluster://
// URL) and checks that Redis answers within -timeout: an unreachable Redis
// is an error (exit 1) then, never a hang. For a cluster that means every
// master: the client learns the masters from the seeds and pings each.
// Unless the URL sets pool_size, the pool (per master, for a cluster) has
// room for every thread's call at once.
func connectRedis(cfg Config, log zerolog.Logger, threads int) (goredis.UniversalClient, error) {
	goredis.SetLogger(redisLogger{log}) // go-redis's own messages, into our log
	pool := max(10*runtime.GOMAXPROCS(0), threads+8)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	var client goredis.UniversalClient
	var err error
	if cfg.redisCluster != nil {
		opts := *cfg.redisCluster
		if opts.PoolSize == 0 {
			opts.PoolSize = pool
		}
		cc := goredis.NewClusterClient(&opts)
		client = cc
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() })
	} else {
		opts := *cfg.redisOpts
		if opts.PoolSize == 0 {
			opts.PoolSize = pool
		}
		client = goredis.NewClient(&opts)
		err = client.Ping(ctx).Err()
	}
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("-redis: cannot reach Redis at %s within -timeout %v: %w (is it running, and is the URL right?)", cfg.redisAddr(), cfg.Timeout, err)
	}
	return client, nil
}

// openShared joins the crawl cfg.CrawlID in Redis: the client, the Colly
// storage (queue and visited set) and the breaker store. Redis that cannot
// be reached is an error (exit 1).
func openShared(cfg Config, log zerolog.Logger) (*shared, error) {
	threads := cfg.Parallelism * max(1, len(cfg.startHosts))
	client, err := connectRedis(cfg, log, threads)
	if err != nil {
		return nil, err
	}
	sh := &shared{client: client, id: cfg.CrawlID, log: log}
	horizon := cfg.WaitHorizon
	if horizon == 0 {
		horizon = -1 // -wait-horizon 0: end as soon as all that is left must wait
	}
	opts := redis.Config{
		Logger: log,
		// How long a killed worker's jobs wait before the others take
		// them: a live worker extends the leases of the jobs it has under
		// way, however long they wait at the breaker's gate (a
		// Retry-After pause, the pace) or at a LimitRule.
		VisibilityTimeout: max(4*cfg.Timeout, time.Minute),
		MaxAttempts:       redisMaxAttempts,
		WaitHorizon:       horizon,
		// A worker with nothing ready looks again this often: one that
		// joins while the first pages are in flight elsewhere gets work
		// as soon as their links are queued.
		PollInterval: 250 * time.Millisecond,
		Shards:       cfg.RedisShards,
	}
	fail := func(err error) (*shared, error) {
		client.Close()
		return nil, err
	}
	if sh.cs, err = redis.NewCollyStorage(client, sh.id, opts); err != nil {
		return fail(usageErr("-redis: %v", err))
	}
	if sh.bs, err = redis.NewBreakerStore(client, sh.id, opts); err != nil {
		return fail(usageErr("-redis: %v", err))
	}
	if sh.q, err = queue.New(threads, sh.cs); err != nil {
		return fail(fmt.Errorf("-redis: %w", err))
	}
	// What the crawl holds already: a worker joining (or continuing) a
	// crawl says so; one whose crawl is all done says that too.
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	st, err := sh.cs.Stats(ctx)
	if err != nil {
		return fail(fmt.Errorf("-redis: reading the crawl %s: %w", sh.id, err))
	}
	log.Info().Str("event", "redis_joined").Str("redis", cfg.redisAddr()).Str("crawl_id", sh.id).
		Int64("ready", st.Ready).Int64("delayed", st.Delayed).Int64("in_flight", st.InFlight).Int64("dead", st.Dead).
		Int("threads", threads).Dur("wait_horizon", cfg.WaitHorizon).
		Msg("working the crawl in Redis with every other worker of the same -crawl-id")
	return sh, nil
}

// configure has the breaker share the circuits; the queue settles each
// request's job with its outcome once it observes the breaker
// (breakwater.Use). The queue's threads outnumber one host's LimitRule
// slots; the pace every run sets (crawl.go) keeps them to -parallelism per
// domain from gate to outcome.
func (sh *shared) configure(c *breaker.Config) { c.Store = sh.bs }

// giveBack returns a request the run cut before it left (the run is
// stopping) to the queue at once, without spending an attempt, so another
// worker takes it now rather than after its lease.
func (sh *shared) giveBack(r *colly.Request) {
	if err := sh.cs.Park(r, time.Time{}); err != nil && !errors.Is(err, redis.ErrStateLost) { // lost: said once already
		sh.log.Warn().Str("event", "job_not_returned").Str("url", r.URL.String()).Err(err).
			Msg("a request cut by the stop could not be put back; it comes back after its lease")
	}
}

// close ends the worker's part: first the Colly storage (idempotent), last
// the client.
func (sh *shared) close() error {
	sh.cs.Close()
	return sh.client.Close()
}

// depth is the crawl's queue depth for the metrics:
// queue_jobs{queue="redis:<id>"}.
func (sh *shared) depth(ctx context.Context) (metrics.QueueDepth, error) {
	s, err := sh.cs.Stats(ctx)
	return metrics.QueueDepth{Ready: s.Ready, Delayed: s.Delayed, InFlight: s.InFlight, Dead: s.Dead}, err
}

// judge is the crawl's queue as a judge of the run, asked within timeout.
func (sh *shared) judge(timeout time.Duration) outcome.Judge {
	return queueJudge{cs: sh.cs, id: sh.id, timeout: timeout}
}

// queueJudge says what the crawl's queue in Redis holds when this worker
// ends: work left (parked or backing off beyond the wait horizon, or still
// ready or in flight elsewhere because this worker stopped early) makes
// the run tripped: the same command continues it. It stands for the
// breaker's "unfinished", which lists this worker's refusals only, even
// those another worker has done since. A crawl whose state vanished from
// Redis under the worker (restarted without persistence, flushed) is an
// error, whatever its queue holds now: what it had queued and done is
// gone.
type queueJudge struct {
	cs      *redis.CollyStorage
	id      string
	timeout time.Duration
}

func (j queueJudge) Judge() outcome.Evidence {
	ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
	defer cancel()
	if err := j.cs.Check(ctx); errors.Is(err, redis.ErrStateLost) {
		return outcome.Evidence{Findings: []outcome.Finding{{State: outcome.Error, Kind: "state_lost",
			Reason: fmt.Sprintf("the crawl %s lost its shared state in Redis: its results are incomplete", j.id)}}}
	}
	st, err := j.cs.Stats(ctx)
	if err != nil {
		return outcome.Evidence{Findings: []outcome.Finding{{State: outcome.Error, Kind: "store_error",
			Reason: fmt.Sprintf("reading what is left of the crawl %s in Redis: %v", j.id, err)}}}
	}
	var ev outcome.Evidence
	if st.Dead > 0 {
		// Died of failures, their attempts spent: a resume will not try
		// them again, a person decides (as with the checkpoint file).
		var samples []string
		if dead, err := j.cs.DeadLetters(ctx, 3); err == nil {
			for _, d := range dead {
				samples = append(samples, d.URL)
			}
		}
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Error, Kind: "dead",
			Reason: fmt.Sprintf("%d URLs of the crawl %s died of failures, their attempts spent (e.g. %s); a person decides: --dead-letters lists them with their last error",
				st.Dead, j.id, strings.Join(samples, ", "))})
	}
	if st.Pending() > 0 {
		ev.Findings = append(ev.Findings, outcome.Finding{State: outcome.Tripped, Kind: "unfinished",
			Reason: fmt.Sprintf("%d URLs left in the crawl %s in Redis for a later run (%d waiting: parked or backing off; %d ready; %d in flight elsewhere): run the same command again",
				st.Pending(), j.id, st.Delayed, st.Ready, st.InFlight)})
	}
	return ev
}

// withoutKind is a judge with some kinds of finding left out.
type withoutKind struct {
	j     outcome.Judge
	kinds []string
}

func (w withoutKind) Judge() outcome.Evidence {
	ev := w.j.Judge()
	ev.Findings = slices.DeleteFunc(slices.Clone(ev.Findings), func(f outcome.Finding) bool { return slices.Contains(w.kinds, f.Kind) })
	return ev
}

// listRedisDeadLetters prints the dead letters of the crawl in Redis with
// their last error: exit 0, 1 when Redis cannot be read, 64 without a
// crawl id.
func listRedisDeadLetters(cfg Config, stdout, stderr io.Writer) int {
	if cfg.CrawlID == "" {
		return usage(stderr, errors.New("--dead-letters with -redis: give -crawl-id, or the start URLs the crawl was started with"))
	}
	log := zerolog.New(stderr).Level(zerolog.WarnLevel)
	client, err := connectRedis(cfg, log, 1)
	if err != nil {
		fmt.Fprintf(stderr, "productcrawl: --dead-letters: %v\n", err)
		return outcome.Error.ExitCode()
	}
	defer client.Close()
	cs, err := redis.NewCollyStorage(client, cfg.CrawlID, redis.Config{Shards: cfg.RedisShards})
	if err != nil {
		return usage(stderr, fmt.Errorf("--dead-letters: %w", err))
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	st, err := cs.Stats(ctx)
	var dead []redis.DeadLetter
	if err == nil {
		dead, err = cs.DeadLetters(ctx, deadLetterListLimit)
	}
	if err != nil {
		fmt.Fprintf(stderr, "productcrawl: --dead-letters: %v\n", err)
		return outcome.Error.ExitCode()
	}
	fmt.Fprintf(stdout, "%d dead URLs in crawl %s at %s", st.Dead, cfg.CrawlID, cfg.redisAddr())
	if int64(len(dead)) < st.Dead {
		fmt.Fprintf(stdout, " (the newest %d)", len(dead))
	}
	fmt.Fprintln(stdout)
	if len(dead) == 0 {
		return 0
	}
	rows := make([]deadRow, len(dead))
	for i, d := range dead {
		rows[i] = deadRow{d.URL, d.Attempts, d.LastError}
	}
	printDead(stdout, rows)
	return 0
}

// deadLetterListLimit is how many dead letters --dead-letters lists at most.
const deadLetterListLimit = 10_000

// redisLogger puts go-redis's own messages (a dial that failed, a pool
// that is being refilled) into the run's log at debug level: storage/redis
// reports what matters as events of its own.
type redisLogger struct{ log zerolog.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug().Str("event", "redis_client").Msg(fmt.Sprintf(format, v...))
}

// purgeRedisCrawl deletes every key of the crawl cfg.CrawlID
// (--redis-purge): "<namespace>:{<crawl id>}:*", storage/redis's layout,
// in the default namespace. It refuses while a worker holds a lease on a
// job of the crawl: deleting under running workers would leave them
// claiming from nothing. Exit 0, 1 when Redis cannot be reached or read,
// 64 without a crawl id.
func purgeRedisCrawl(cfg Config, stdout, stderr io.Writer) int {
	if cfg.CrawlID == "" {
		return usage(stderr, errors.New("--redis-purge: give -crawl-id, or the start URLs the crawl was started with"))
	}
	log := zerolog.New(stderr).Level(zerolog.WarnLevel)
	client, err := connectRedis(cfg, log, 1)
	if err != nil {
		fmt.Fprintf(stderr, "productcrawl: --redis-purge: %v\n", err)
		return outcome.Error.ExitCode()
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), max(cfg.Timeout, 30*time.Second))
	defer cancel()
	n, err := redis.DeleteCrawl(ctx, client, "", cfg.CrawlID, cfg.RedisShards)
	if err != nil {
		fmt.Fprintf(stderr, "productcrawl: --redis-purge: at %s: %v\n", cfg.redisAddr(), err)
		return outcome.Error.ExitCode()
	}
	fmt.Fprintf(stdout, "deleted %d keys of crawl %s at %s\n", n, cfg.CrawlID, cfg.redisAddr())
	return 0
}
