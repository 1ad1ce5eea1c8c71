package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/breakwater-crawl/breakwater/extensions/validate"
	"github.com/breakwater-crawl/breakwater/report"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/testserver"
	goredis "github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Config is everything a run is told. Flags fill it, validate checks it
// before any request is sent. To add a flag: add a field here, register it
// in flags, check it in validate, and wire it in newCrawl.
type Config struct {
	// URLs are the start URLs; none means the embedded demo fleet.
	URLs []string

	Follow         string   // links to follow, from valid pages
	ProductURL     string   // regexp: which URLs are product pages
	Require        []string // selectors a valid product page must have
	ListingRequire []string // selectors every other page must have
	MinBytes       int      // byte floor of every page
	Fields         []Field  // what goes into each JSON line

	Profile     string // breaker profile name
	Profiles    string // YAML file of breaker profiles and per-domain assignments
	Metrics     string // address to serve Prometheus metrics on; "" = none
	Parallelism int    // requests in flight per start host
	MaxPages    int    // requests issued at most; 0 = no limit
	MaxDepth    int    // links followed from a start URL at most, as Colly's MaxDepth; 0 = no limit
	UserAgent   string // User-Agent header; "" = Colly's
	// ObeyRobots makes each host's robots.txt decide what is crawled
	// (robots.go); MaxCrawlDelay caps the gap a Crawl-delay imposes.
	ObeyRobots    bool
	MaxCrawlDelay time.Duration
	Timeout       time.Duration

	Out string // records file, appended to: JSON lines, or CSV when it ends in .csv
	// Checkpoint is the checkpoint file; Resume continues the crawl it
	// holds; RetryDead, with Resume, gives the URLs that died of failures
	// their attempts back; DeadLetters lists its dead URLs and exits.
	Checkpoint  string
	Resume      bool
	RetryDead   bool
	DeadLetters bool
	// Redis is the URL of the Redis that holds a shared crawl instead of
	// the checkpoint file; CrawlID names the crawl there (every worker of
	// it passes the same); WaitHorizon is how far ahead a worker waits for
	// delayed work before it ends its run; RedisShards is how many hash
	// slots the crawl is spread over (storage/redis's Config.Shards). See
	// redis.go.
	Redis       string
	CrawlID     string
	WaitHorizon time.Duration
	RedisShards int
	// RedisPurge deletes every key of the -redis crawl and exits.
	RedisPurge bool
	Version    bool          // print the version and exit
	Report     string        // text, json or html
	ReportFile string        // where the report goes instead of stdout; html: report.html by default
	LogLevel   string        // zerolog level
	LogFormat  string        // auto, json or console
	Status     string        // auto, line, log or off
	Progress   time.Duration // how often progress is logged when not a terminal

	// Derived by validate.
	profile        breaker.Profile
	format         report.Format
	level          zerolog.Level
	productRE      *regexp.Regexp
	startHosts     []string                   // host[:port] of each start URL as Colly sees it (storage.Identify), unique
	startDomain    []string                   // their hostnames (no port), unique, for AllowedDomains
	checkpointSet  bool                       // -checkpoint was given
	profileSet     bool                       // -profile was given
	profileDomains map[string]breaker.Profile // the breaker's Config.Domains (profileDomains)
	pacing         *profiles.Set              // -profiles, for its per-domain least gaps; nil without
	redisOpts      *goredis.Options           // parsed -redis naming one server, nil otherwise
	redisCluster   *goredis.ClusterOptions    // parsed -redis naming a Redis Cluster, nil otherwise
	crawlIDSet     bool                       // -crawl-id was given
	waitSet        bool                       // -wait-horizon was given
	shardsSet      bool                       // -redis-shards was given
}

// Field is one --field name=selector: the text of the first element the
// selector matches goes into each JSON line under name.
type Field struct {
	Name     string
	Selector string
}

// defaults match the test store's markup, so a run with no flags works.
func defaults() Config {
	return Config{
		Follow:         testserver.ProductLinkSelector + ", " + testserver.NextSelector,
		ProductURL:     `/products/`,
		Require:        []string{testserver.TitleSelector},
		ListingRequire: []string{"ul.products"},
		MinBytes:       validate.DefaultMinBytes,
		Fields:         []Field{{"title", testserver.TitleSelector}, {"price", testserver.PriceSelector}},
		Profile:        breaker.Standard().Name,
		Parallelism:    2,
		Timeout:        10 * time.Second,
		Out:            "products.jsonl",
		Checkpoint:     "crawl.db",
		Report:         "text",
		LogLevel:       "info",
		LogFormat:      "auto",
		Status:         "auto",
		Progress:       time.Second,
		WaitHorizon:    defaultWaitHorizon,
		MaxCrawlDelay:  30 * time.Second,
		RedisShards:    1,
	}
}

// usageError is every error about flags or configuration: exit 64.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// listFlag is a repeatable string flag. The defaults stand until the flag
// is given; the first use replaces them.
type listFlag struct {
	list *[]string
	set  bool
}

func (f *listFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, " | ")
}

func (f *listFlag) Set(s string) error {
	if !f.set {
		*f.list, f.set = nil, true
	}
	*f.list = append(*f.list, s)
	return nil
}

// fieldFlag is the repeatable --field name=selector.
type fieldFlag struct {
	fields *[]Field
	set    bool
}

func (f *fieldFlag) String() string {
	if f.fields == nil {
		return ""
	}
	var parts []string
	for _, fl := range *f.fields {
		parts = append(parts, fl.Name+"="+fl.Selector)
	}
	return strings.Join(parts, " | ")
}

func (f *fieldFlag) Set(s string) error {
	name, sel, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(sel) == "" {
		return fmt.Errorf("want name=selector, got %q", s)
	}
	if !f.set {
		*f.fields, f.set = nil, true
	}
	*f.fields = append(*f.fields, Field{strings.TrimSpace(name), strings.TrimSpace(sel)})
	return nil
}

// flags registers every flag on fs, filling cfg.
func (cfg *Config) flags(fs *flag.FlagSet) {
	fs.StringVar(&cfg.Follow, "follow", cfg.Follow, "CSS selector of the links to follow from every valid page")
	fs.StringVar(&cfg.ProductURL, "product-url", cfg.ProductURL, "regular expression matching the URLs of product pages (the others are listings)")
	fs.Var(&listFlag{list: &cfg.Require}, "require", "CSS selector a valid product page must have (repeatable; replaces the default)")
	fs.Var(&listFlag{list: &cfg.ListingRequire}, "listing-require", "CSS selector every other page must have (repeatable; replaces the default)")
	fs.IntVar(&cfg.MinBytes, "min-bytes", cfg.MinBytes, "byte floor of product pages: a shorter body is invalid (0 turns it off); other pages are judged by -listing-require, or by this floor if it is empty")
	fs.Var(&fieldFlag{fields: &cfg.Fields}, "field", "name=selector: what goes into each JSON line, the text of the first match (repeatable; replaces the default)")
	fs.StringVar(&cfg.Profile, "profile", cfg.Profile, "breaker profile: conservative, standard, aggressive, or one defined in -profiles")
	fs.StringVar(&cfg.Profiles, "profiles", cfg.Profiles, "YAML file of breaker profiles (breaker_profiles: name → window, threshold, cooldown, probes), a default, per-domain assignments (domains) and per-domain least gaps between requests (pacing: host → min_gap_ms)")
	fs.StringVar(&cfg.Metrics, "metrics", cfg.Metrics, "serve Prometheus metrics at http://ADDR/metrics while the crawl runs, e.g. 127.0.0.1:9090 (a bare :9090 listens on every interface)")
	fs.IntVar(&cfg.Parallelism, "parallelism", cfg.Parallelism, "requests in flight at most, per start host")
	fs.IntVar(&cfg.MaxPages, "max-pages", cfg.MaxPages, "requests issued at most over the whole run (0: no limit)")
	fs.IntVar(&cfg.MaxDepth, "max-depth", cfg.MaxDepth, "links followed from a start URL at most: 1 fetches the start URLs only, 2 the pages they link to too (0: no limit; listings' next-page links count)")
	fs.StringVar(&cfg.UserAgent, "user-agent", cfg.UserAgent, "User-Agent header of every request, and the agent robots.txt rules are matched against (default: Colly's)")
	fs.BoolVar(&cfg.ObeyRobots, "obey-robots", cfg.ObeyRobots, "obey each host's robots.txt: disallowed URLs are not crawled (the report counts them under robots), a Crawl-delay is the host's least gap between requests, and a robots.txt answering 5xx pauses the host like an open circuit until robots.txt is fetched again after the cooldown")
	fs.DurationVar(&cfg.MaxCrawlDelay, "max-crawl-delay", cfg.MaxCrawlDelay, "with --obey-robots: the longest gap a robots.txt Crawl-delay may impose (a longer one is cut to this)")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "timeout of one request")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "file the valid products are appended to: CSV with a header row if the name ends in .csv, else one JSON object a line")
	fs.StringVar(&cfg.Checkpoint, "checkpoint", cfg.Checkpoint, "checkpoint file: the state of every URL, so a stopped crawl can be resumed (the demo fleet, which cannot be resumed, uses a temporary one unless this is given)")
	fs.BoolVar(&cfg.Resume, "resume", cfg.Resume, "continue the crawl in -checkpoint: fetch only what it did not finish, never write a URL already in -out (without it an existing checkpoint is refused)")
	fs.BoolVar(&cfg.RetryDead, "retry-dead", cfg.RetryDead, "with --resume: fetch again the URLs that died of failures (their attempts spent on 5xx, timeouts, invalid pages, 403s; not 404/410), with their attempts reset: once their cause is fixed or their site is back")
	fs.BoolVar(&cfg.DeadLetters, "dead-letters", cfg.DeadLetters, "list the URLs -checkpoint (or the -redis crawl) gave up on, with their last error, and exit")
	fs.StringVar(&cfg.Redis, "redis", cfg.Redis, "share the crawl through the Redis at this URL (redis://[user:password@]host:6379/0, rediss:// for TLS), or through a Redis Cluster given by its seed nodes (redis+cluster://[user:password@]host:7000,host:7001,host:7002, rediss+cluster:// for TLS; any one reachable seed is enough), instead of the -checkpoint file: every productcrawl started with the same -redis and -crawl-id works the same crawl, on one machine or many")
	fs.StringVar(&cfg.CrawlID, "crawl-id", cfg.CrawlID, "with -redis: the crawl's name in Redis, the same for every worker; the same id continues a crawl, a new one starts a new crawl (default: derived from the start URLs)")
	fs.IntVar(&cfg.RedisShards, "redis-shards", cfg.RedisShards, "with -redis: spread the crawl over this many hash slots, so that as many masters of a Redis Cluster serve it (its URLs by a hash of each URL, its circuits by domain); every worker of the crawl must give the same number: another number is another crawl (1: one slot, one master)")
	fs.DurationVar(&cfg.WaitHorizon, "wait-horizon", cfg.WaitHorizon, "with -redis: a worker waits for work due within this long (URLs parked while Redis was unreachable, a retry's backoff, the end of a tripped domain's cooldown); when all that is left is due later, it ends its run as tripped and leaves that work queued for the next run (0: end as soon as all that is left must wait)")
	fs.BoolVar(&cfg.RedisPurge, "redis-purge", cfg.RedisPurge, "with -redis: delete every key of the crawl (-crawl-id, or the one the start URLs name) and exit; stop its workers first (otherwise the keys expire 7 days after the crawl's last change)")
	fs.BoolVar(&cfg.Version, "version", cfg.Version, "print the version and exit")
	fs.StringVar(&cfg.Report, "report", cfg.Report, "final report format: text or json (on stdout), or html: a page with a timeline per domain written to -report-file, the text table still on stdout")
	fs.StringVar(&cfg.ReportFile, "report-file", cfg.ReportFile, "write the report to this file instead of stdout (default with -report html: report.html)")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error or disabled")
	fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "log format on stderr: json, console, or auto (console on a terminal)")
	fs.StringVar(&cfg.Status, "status", cfg.Status, "progress display: line (live status line on stdout), log (periodic log events), off, or auto (line on a terminal)")
	fs.DurationVar(&cfg.Progress, "progress", cfg.Progress, "how often progress is logged with -status log")
}

const usageHead = `Usage: productcrawl [flags] [start URL ...]

Crawls product pages with Breakwater's per-domain circuit breaker and page
validation on, appends every valid product to -out (a JSON line, or a CSV row
when -out ends in .csv), prints a per-domain report on stdout and exits with
the run's outcome. With no start
URL it crawls an embedded local test store fleet: one healthy store, one that
degrades to 503s mid-run and one that turns into consent shells.

Flags (-flag or --flag):
`

const usageTail = `
A checkpoint (-checkpoint, crawl.db by default) keeps the state of every URL.
A run that ends tripped, is interrupted or killed is continued with --resume:
it fetches only what was not done and never writes a URL twice to -out. A URL
that failed (5xx, timeout, invalid page) is tried again by later resumes until
its attempts (3) are spent; then it is dead, and the run ends as an error
naming it until --resume --retry-dead fetches it again (404 and 410 are dead
at once, and fine).

With -redis the crawl lives in Redis instead, shared by every productcrawl
started with the same -redis and -crawl-id (on one machine or many): each
URL is fetched by one worker, the circuit breakers are shared (a trip seen by
one worker is seen by all), and each worker appends what it fetched to its
own -out. A worker runs until no work is left anywhere in the crawl, or only
work that must wait beyond -wait-horizon; running the same command again
continues the crawl (-checkpoint and --resume do not apply). Its keys expire
7 days after its last change; --redis-purge deletes them at once. For a Redis
Cluster give its seeds: -redis redis+cluster://host:7000,host:7001,host:7002;
one crawl's keys share one hash slot, so one master serves a crawl, unless
-redis-shards N spreads it over N slots (N = the masters: one shard each).

Exit codes:
  0   complete  work done, records written
  2   tripped   a target degraded (or the run was interrupted); reschedule
  3   empty     ran to the end, nothing valid collected, nothing tripped
  1   error     a bug, a crash, a broken environment, selector_broken, no start
                URL reachable (refused, unresolved), or URLs dead of failures
                (their attempts spent): a human must look
  64  usage     bad flags or configuration; nothing was sent
`

// printUsage writes the help text to w.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, usageHead)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprint(w, usageTail)
}

// parseConfig reads args. It returns flag.ErrHelp for -h, and a
// *usageError for anything wrong; nothing is sent before it returns.
func parseConfig(args []string, help io.Writer) (Config, error) {
	cfg := defaults()
	fs := flag.NewFlagSet("productcrawl", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are ours to print; Go's flag would exit 2
	fs.Usage = func() {}
	cfg.flags(fs)
	// Flags may come before and after the start URLs.
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(help, fs)
				return cfg, err
			}
			return cfg, usageErr("%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		cfg.URLs = append(cfg.URLs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if cfg.Version {
		fmt.Fprintln(help, versionLine())
		return cfg, errVersion
	}
	fs.Visit(func(f *flag.Flag) {
		cfg.checkpointSet = cfg.checkpointSet || f.Name == "checkpoint"
		cfg.profileSet = cfg.profileSet || f.Name == "profile"
		cfg.crawlIDSet = cfg.crawlIDSet || f.Name == "crawl-id"
		cfg.waitSet = cfg.waitSet || f.Name == "wait-horizon"
		cfg.shardsSet = cfg.shardsSet || f.Name == "redis-shards"
	})
	return cfg, cfg.validate()
}

// validate checks cfg and derives what the crawl needs. Every error names
// the flag and says what would be right.
func (cfg *Config) validate() error {
	var err error
	seen := map[string]bool{}
	for _, raw := range cfg.URLs {
		// The hosts as Colly will see them, not as written (hosts.go).
		u, _, perr := storage.Identify(raw, nil)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("start URL %q: want an absolute http or https URL", raw)
		}
		h := strings.ToLower(u.Host)
		if !seen[h] {
			seen[h] = true
			cfg.startHosts = append(cfg.startHosts, h)
			if d := strings.ToLower(u.Hostname()); !slices.Contains(cfg.startDomain, d) {
				cfg.startDomain = append(cfg.startDomain, d)
			}
		}
	}
	if err := selector("-follow", cfg.Follow); err != nil {
		return err
	}
	for _, s := range cfg.Require {
		if err := selector("-require", s); err != nil {
			return err
		}
	}
	for _, s := range cfg.ListingRequire {
		if err := selector("-listing-require", s); err != nil {
			return err
		}
	}
	if cfg.productRE, err = regexp.Compile(cfg.ProductURL); err != nil || cfg.ProductURL == "" {
		return usageErr("-product-url %q: want a regular expression matching product page URLs (%v)", cfg.ProductURL, err)
	}
	names := map[string]bool{"url": true, "fetched_at": true}
	if len(cfg.Fields) == 0 {
		return usageErr("-field: at least one name=selector is needed")
	}
	for _, f := range cfg.Fields {
		if names[f.Name] {
			return usageErr("-field %s=%s: the name %q is taken (url and fetched_at are always written; names must differ)", f.Name, f.Selector, f.Name)
		}
		names[f.Name] = true
		if err := selector("-field "+f.Name, f.Selector); err != nil {
			return err
		}
	}
	if cfg.MinBytes < 0 {
		return usageErr("-min-bytes %d: want 0 (no floor) or more", cfg.MinBytes)
	}
	if cfg.Parallelism < 1 {
		return usageErr("-parallelism %d: want 1 or more", cfg.Parallelism)
	}
	if cfg.MaxPages < 0 {
		return usageErr("-max-pages %d: want 0 (no limit) or more", cfg.MaxPages)
	}
	if cfg.MaxCrawlDelay < 0 {
		return usageErr("-max-crawl-delay %v: want 0 (ignore Crawl-delay) or a positive duration, e.g. 30s", cfg.MaxCrawlDelay)
	}
	if cfg.MaxDepth < 0 {
		return usageErr("-max-depth %d: want 0 (no limit) or more", cfg.MaxDepth)
	}
	if strings.ContainsFunc(cfg.UserAgent, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return usageErr("-user-agent %q: control characters cannot go into a header", cfg.UserAgent)
	}
	if cfg.Timeout <= 0 {
		return usageErr("-timeout %v: want a positive duration, e.g. 10s", cfg.Timeout)
	}
	if cfg.Progress < 0 {
		return usageErr("-progress %v: want a positive duration, or 0 for no progress events", cfg.Progress)
	}
	var set *profiles.Set // nil: no file, the built-in profiles
	if cfg.Profiles != "" {
		if set, err = profiles.Load(cfg.Profiles); err != nil {
			return usageErr("-profiles: %v", err)
		}
	}
	if cfg.profileSet || set == nil {
		if cfg.profile, err = set.Profile(strings.ToLower(cfg.Profile)); err != nil {
			return usageErr("-profile %q: want conservative, standard, aggressive or a profile defined in -profiles", cfg.Profile)
		}
	} else {
		cfg.profile = set.Default()
	}
	cfg.profileDomains = profileDomains(set)
	cfg.pacing = set
	if cfg.Metrics != "" {
		_, port, err := net.SplitHostPort(cfg.Metrics)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			return usageErr("-metrics %q: want host:port, e.g. 127.0.0.1:9090", cfg.Metrics)
		}
	}
	switch strings.ToLower(strings.TrimSpace(cfg.Report)) {
	case "text":
		cfg.format = report.Text
	case "json":
		cfg.format = report.JSON
	case "html":
		cfg.format = report.HTML
		if cfg.ReportFile == "" {
			cfg.ReportFile = "report.html"
		}
	default:
		return usageErr("-report %q: want text, json or html", cfg.Report)
	}
	if cfg.level, err = zerolog.ParseLevel(strings.ToLower(cfg.LogLevel)); err != nil || cfg.LogLevel == "" {
		return usageErr("-log-level %q: want debug, info, warn, error or disabled", cfg.LogLevel)
	}
	switch cfg.LogFormat {
	case "auto", "json", "console":
	default:
		return usageErr("-log-format %q: want json, console or auto", cfg.LogFormat)
	}
	switch cfg.Status {
	case "auto", "line", "log", "off":
	default:
		return usageErr("-status %q: want auto, line, log or off", cfg.Status)
	}
	if strings.TrimSpace(cfg.Out) == "" {
		return usageErr("-out: want a file name")
	}
	if strings.TrimSpace(cfg.Checkpoint) == "" {
		return usageErr("-checkpoint: want a file name")
	}
	if cfg.RedisPurge && cfg.Redis == "" {
		return usageErr("--redis-purge deletes a crawl in Redis: give -redis (and -crawl-id or the start URLs)")
	}
	if cfg.RetryDead && (!cfg.Resume || cfg.Redis != "") {
		return usageErr("--retry-dead re-drives the dead URLs of the crawl in -checkpoint: pass --resume with it (it does not apply to -redis)")
	}
	return cfg.validateRedis()
}

// selector checks a CSS selector the way the validator and goquery will
// read it.
func selector(flagName, s string) error {
	if strings.TrimSpace(s) == "" {
		return usageErr("%s: empty selector", flagName)
	}
	if _, err := cascadia.ParseGroup(s); err != nil {
		return usageErr("%s %q: not a valid CSS selector: %v", flagName, s, err)
	}
	return nil
}
