package main

import (
	"fmt"
	"github.com/breakwater-crawl/breakwater/observe"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/breakwater-crawl/breakwater/circuit"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// status shows how the crawl is going: a live line on stdout when it is a
// terminal (pages/s, records, each domain's circuit state), otherwise a
// progress log event every -progress. Log lines written while the status
// line is shown first clear it, then it is drawn again under them.
type status struct {
	mode  string // "line", "log" or "off"
	out   io.Writer
	every time.Duration
	width int

	log     zerolog.Logger
	b       *breaker.Breaker
	sink    *sink
	samples []progress // the last few, for the rate; the ticker's own
	stopCh  chan struct{}
	done    chan struct{}

	mu    sync.Mutex // guards the terminal: the line and log lines between redraws
	shown string     // the line on screen, "" when none
}

type progress struct {
	at    time.Time
	pages int64
}

// lineTick is how often the status line is redrawn.
const lineTick = 250 * time.Millisecond

// newStatus picks the mode: "auto" is a line when stdout is a terminal.
func newStatus(mode string, stdout io.Writer, every time.Duration) *status {
	f, isFile := stdout.(*os.File)
	if mode == "auto" {
		mode = "log"
		if isFile && isTerminal(f) {
			mode = "line"
		}
	}
	if mode == "log" && every <= 0 {
		mode = "off"
	}
	s := &status{mode: mode, out: stdout, every: every, width: 100}
	if isFile {
		if w := termWidth(f); w > 0 {
			s.width = w
		}
	}
	return s
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// wrap returns a writer for the logger: in line mode it clears the status
// line before each log line and draws it again after.
func (s *status) wrap(w io.Writer) io.Writer {
	if s.mode != "line" {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		shown := s.shown
		s.clearLocked()
		n, err := w.Write(p)
		s.drawLocked(shown)
		return n, err
	})
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// start shows progress until stop.
func (s *status) start(log zerolog.Logger, b *breaker.Breaker, out *sink) {
	// Set before the goroutine that reads them starts.
	s.log, s.b, s.sink = log, b, out
	s.samples = []progress{{at: time.Now()}}
	if s.mode == "off" {
		return
	}
	s.stopCh, s.done = make(chan struct{}), make(chan struct{})
	tick := lineTick
	if s.mode == "log" {
		tick = s.every
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-s.stopCh:
				return
			case now := <-t.C:
				s.update(now)
			}
		}
	}()
}

// stop ends the display and clears the line, before the report is printed.
func (s *status) stop() {
	if s.stopCh == nil {
		return
	}
	close(s.stopCh)
	<-s.done
	s.mu.Lock()
	s.clearLocked()
	s.mu.Unlock()
}

// update reads the counters, then redraws the line or logs an event.
// The counters are read before taking the lock the log writer takes, so
// an extension logging while it holds a lock of its own cannot deadlock
// with the status line.
func (s *status) update(now time.Time) {
	stats := s.b.Stats()
	records, _ := s.sink.counts()
	var pages, refused int64
	for _, d := range stats {
		for class, n := range d.Outcomes {
			if class != circuit.Excluded.String() {
				pages += n
			}
		}
		refused += d.Refused
	}
	// Only this goroutine touches the samples.
	s.samples = append(s.samples, progress{now, pages})
	if s.mode == "log" { // the rate since the last event
		s.samples = s.samples[len(s.samples)-2:]
	} else if len(s.samples) > 9 { // about two seconds of line ticks
		s.samples = s.samples[1:]
	}
	rate := 0.0
	if first := s.samples[0]; now.Sub(first.at) > 0 {
		rate = float64(pages-first.pages) / now.Sub(first.at).Seconds()
	}

	if s.mode == "log" {
		doms := zerolog.Dict()
		for _, d := range stats {
			word, _ := domainState(d, now)
			doms.Str(d.Domain, word)
		}
		s.log.Info().Str("event", "progress").Int64("pages", pages).Float64("pages_per_s", round1(rate)).
			Int64("records", records).Int64("refused", refused).Dict("domains", doms).Msg("progress")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%5.1f pages/s  %d pages  %d records  │", rate, pages, records)
	for _, d := range stats {
		word, left := domainState(d, now)
		if word != "closed" && word != "slowed" {
			word = strings.ToUpper(word)
		}
		if left > 0 {
			word += " " + left.String()
		}
		fmt.Fprintf(&b, " %s %s ", d.Domain, word)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	s.drawLocked(b.String())
}

// domainState is how a domain stands for the status display: its
// circuit's state ("closed", "open", "half-open"), or "paused" while a
// Retry-After halts it (its circuit closed all along), or "slowed" when
// it is closed but held to a gap between requests after throttling;
// with the time left, to the second, before an open circuit may be
// probed or a pause ends.
func domainState(d observe.DomainStats, now time.Time) (string, time.Duration) {
	left := func(t time.Time) time.Duration {
		if t.After(now) {
			return (t.Sub(now) + time.Second - 1).Truncate(time.Second) // rounded up: "0s" would read as over
		}
		return 0
	}
	switch {
	case d.State == circuit.Open:
		return "open", left(d.RetryAt)
	case d.State == circuit.HalfOpen:
		return "half-open", 0
	case d.Pace.HaltUntil.After(now):
		return "paused", left(d.Pace.HaltUntil)
	case d.Pace.Gap > 0 && d.Outcomes[circuit.Throttled.String()] > 0:
		return "slowed", 0
	}
	return "closed", 0
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

func (s *status) clearLocked() {
	if s.shown != "" {
		fmt.Fprint(s.out, "\r\x1b[K")
		s.shown = ""
	}
}

// drawLocked shows line, cut to the terminal's width so it never wraps
// (a wrapped line cannot be redrawn in place).
func (s *status) drawLocked(line string) {
	if line == "" {
		return
	}
	if r := []rune(line); len(r) > s.width-1 {
		line = string(r[:s.width-1])
	}
	fmt.Fprint(s.out, line)
	s.shown = line
}
