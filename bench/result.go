package main

import (
	"encoding/json"
	"time"
)

// Result is one client's run of one scenario: what the stores saw, what the
// client kept, and what the scenario measures.
type Result struct {
	Scenario string `json:"scenario"`
	Client   string `json:"client"`

	// Requests is how many requests the stores received.
	Requests int `json:"requests"`
	// IntoFailure is how many of them arrived from the store's first
	// failing answer on, that one included (testserver's SentAfterFailing:
	// the requests sent into a degradation, or after the first 429); -1
	// where the scenario does not measure it.
	IntoFailure int `json:"after_first_failure"`
	// Saved is how many distinct product pages the client saved (the
	// title found; for Breakwater also a valid verdict) out of Pages queued.
	Saved int `json:"saved"`
	Pages int `json:"pages"`
	// Wall is the run's wall time; in the hang scenarios, the time until
	// every healthy store's pages were saved.
	Wall Duration `json:"wall"`
	// Cut is set when the run hit the cap (-cap) and was stopped.
	Cut bool `json:"cut,omitempty"`

	// Measured is the scenario's figure for people ("1.74× alone"), and
	// Ratio its number where it is one.
	Measured string  `json:"measured"`
	Ratio    float64 `json:"ratio,omitempty"`

	// Scenario-specific figures; zero where they do not apply.
	RunEnd      Duration  `json:"run_end,omitzero"`        // hang: when the run with the hanging store ended
	Alone       Duration  `json:"alone,omitzero"`          // hang: the same run without the hanging store
	PagesPerSec float64   `json:"pages_per_sec,omitempty"` // overhead: best round
	Rounds      []float64 `json:"rounds,omitempty"`        // overhead: pages/s of every round, in order
	CPUPerPage  Duration  `json:"cpu_per_page,omitzero"`   // overhead, durable, broad: the process's CPU time per page (stores included; durable: + Redis's), least of the rounds
	CPURounds   []float64 `json:"cpu_rounds,omitempty"`    // overhead, durable, broad: µs of CPU per page in every round, in order
	// CPUPerPageMedian is the median of CPURounds, in µs.
	CPUPerPageMedian float64 `json:"cpu_per_page_median_us,omitempty"`
	// AddedCPUPerPage is the median over the rounds of the client's CPU per
	// page less plain Colly's in the same round, in µs (broad,
	// broad-small; overhead).
	AddedCPUPerPage float64 `json:"added_cpu_per_page_us,omitempty"`
	// Durable: the Redis server's CPU time per page (median of the rounds,
	// µs; part of CPURounds) and the commands it processed per page (any
	// client's: more than the anchor sends means others used the server).
	// Pointers, so that a durable row shows 0 where Redis was not used.
	RedisCPUPerPage      *float64 `json:"redis_cpu_per_page_us,omitempty"`
	RedisCommandsPerPage *float64 `json:"redis_commands_per_page,omitempty"`
	// WallRatio and CPURatio are a client's per-round ratios to plain
	// Colly (pages/s, and plain's CPU per page over the client's: above 1
	// is better for both), their median and range; Ratio is whichever
	// the run judges (-judge).
	WallRatio    *spread  `json:"wall_ratio,omitempty"`
	CPURatio     *spread  `json:"cpu_ratio,omitempty"`
	Share429     float64  `json:"share_throttled,omitzero"` // ratelimit: throttled answers ÷ requests
	Ideal        Duration `json:"ideal,omitzero"`           // ratelimit: pages ÷ rate
	BreakerState string   `json:"breaker_state,omitempty"`  // Breakwater / gobreaker: state of the store's circuit at the end
	Trips        int      `json:"trips,omitempty"`
	Refused      int64    `json:"refused,omitempty"` // requests a breaker refused without touching the network
	Retries      int64    `json:"retries,omitempty"` // retries the retry loop issued
	// Broad and broad-small: the domains crawled; heap per domain after GC
	// (the live heap less the heap before the run, over the domains):
	// HeapPerDomain while every domain is active (kept whole: for Breakwater
	// the breaker, validator, metrics and the checkpoint's own state, its
	// store's records and the collector let go; for plain Colly its
	// visited set), BytesPerDomain the same once every domain is idle and
	// compacted, HeapAllPerDomain everything alive at the end of the
	// measured rounds (the checkpoint's records in memory included); the
	// peak resident set, the metrics' series and scrape time.
	Domains          int     `json:"domains,omitempty"`
	BytesPerDomain   float64 `json:"bytes_per_domain,omitempty"`
	HeapPerDomain    float64 `json:"heap_per_domain,omitempty"`
	HeapAllPerDomain float64 `json:"heap_all_per_domain,omitempty"`
	PeakRSS          int64   `json:"peak_rss_bytes,omitempty"`
	MetricsSeries    int     `json:"metrics_series,omitempty"`
	ScrapeSeconds    float64 `json:"scrape_seconds,omitempty"`
	ScrapeMaxSeconds float64 `json:"scrape_max_seconds,omitempty"`
	PagesPerSRatio   float64 `json:"pages_per_s_ratio,omitempty"`
	Compacted        int     `json:"compacted_domains,omitempty"`

	// CheckpointDone is how many URLs the embedded checkpoint held done
	// at the end of the run (overhead: Breakwater's best round).
	CheckpointDone int `json:"checkpoint_done,omitempty"`

	// Goal is the goal for this row, judged on figures of this
	// same run; nil for rows without one.
	Goal *Goal `json:"goal,omitempty"`
}

// Goal is one goal of the project, met or missed, with what was
// measured against it.
type Goal struct {
	Text     string `json:"text"`     // the goal, e.g. "≤ 12 into the degradation, ≥ 10× fewer than retry"
	Met      bool   `json:"met"`      // judged on this run's figures
	Measured string `json:"measured"` // the figures judged, e.g. "11; 147× fewer"
}

// Duration is a time.Duration that reads as seconds in JSON.
type Duration time.Duration

// MarshalJSON writes the duration in seconds, as a number.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Seconds())
}

// Report is everything one run of the command measured.
type Report struct {
	Started   time.Time `json:"started"`
	Finished  time.Time `json:"finished"`
	Scale     float64   `json:"scale"`
	CPUs      int       `json:"cpus"`
	GoVersion string    `json:"go_version"`
	// LoadBefore and LoadAfter are the machine's 1-minute load average
	// (/proc/loadavg) when the run started and ended; -1 if unknown.
	LoadBefore float64  `json:"load_before"`
	LoadAfter  float64  `json:"load_after"`
	Notes      []string `json:"notes"`
	Results    []Result `json:"results"`
}
