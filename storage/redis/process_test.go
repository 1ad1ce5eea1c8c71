package redis_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// workerProc is a worker running as a process of its own: this test binary
// run again with workerEnv set (see TestMain).
type workerProc struct {
	name   string
	cmd    *exec.Cmd
	stderr logBuffer     // zerolog lines
	done   chan struct{} // closed once the process and its output are finished
	err    error         // Wait's result, once done
}

func startWorkerProc(t *testing.T, cfg workerConfig, ev *events) *workerProc {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &workerProc{name: cfg.Name, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), workerEnv+"="+string(raw))
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		copyErr := scanLines(bufio.NewReader(stdout), ev)
		err := p.cmd.Wait()
		p.err = errors.Join(err, copyErr)
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	})
	return p
}

// wait waits for the worker to exit, for at most d.
func (p *workerProc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("worker %s still running after %v", p.name, d)
		return nil
	}
}

func scanLines(r *bufio.Reader, w io.Writer) error {
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			_, _ = w.Write(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// The same crawl as TestThreeWorkersShareOneCrawl, smaller, with the
// workers as three processes.
func TestWorkerProcessesShareOneCrawl(t *testing.T) {
	t.Parallel() // a long test of its own keys or server: overlap it with the others
	const domains, products, parallelism = 6, 50, 3
	client, ns := newNamespace(t)
	f := fleet(t, domains, products, testserver.Scenario{Mode: testserver.Degrade, After: 30}, testserver.Scenario{})
	var ev events
	ev.recoverOnTrip(t, f.Stores[0])
	var procs []*workerProc
	for w := range 3 {
		procs = append(procs, startWorkerProc(t, workerConfig{
			Name: "p" + strconv.Itoa(w), Addr: client.Options().Addr, Namespace: ns, Crawl: "shop",
			Seeds: productSeeds(f, products), Parallelism: parallelism, Visibility: 20 * time.Second,
			Cooldown: 1500 * time.Millisecond, Poll: 20 * time.Millisecond,
		}, &ev))
	}
	for _, p := range procs {
		if err := p.wait(t, 60*time.Second); err != nil {
			t.Errorf("worker %s: %v\n%s", p.name, err, p.stderr.raw())
		}
	}
	checkEveryProductOnce(t, f, products, client, inspect(t, client, ns, redis.Config{}), 0)
	if trips := ev.count("transition", func(e workerEvent) bool { return e.To == "open" }); trips != 1 {
		t.Errorf("%d trips across the worker processes, want 1: %v", trips, transitions(&ev))
	}
	if n, bound := f.Stores[0].CountMode(testserver.Degrade), 10+3*parallelism; n > bound {
		t.Errorf("the degrading domain answered %d requests with 503, want at most %d", n, bound)
	}
	for _, p := range procs {
		if n := ev.count("done", func(e workerEvent) bool { return e.Worker == p.name }); n == 0 {
			t.Errorf("worker process %s did no work", p.name)
		}
	}
	t.Logf("3 processes: transitions %v, %d sent into the degradation", transitions(&ev), f.Stores[0].CountMode(testserver.Degrade))
}

// A worker process SIGKILLed mid-crawl: the jobs it had claimed come back
// after the visibility timeout and the others do them; nothing is lost.
func TestKilledWorkersJobsAreDoneByTheOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the full check (.ci/run) runs it")
	}
	t.Parallel() // a long test of its own keys or server: overlap it with the others
	const domains, products, parallelism = 6, 40, 3
	const visibility = time.Second
	client, ns := newNamespace(t)
	slow := testserver.Scenario{Mode: testserver.Healthy, Latency: 25 * time.Millisecond} // so jobs are in flight at the kill
	f := fleet(t, domains, products, slow, slow)
	var ev events
	var procs []*workerProc
	for w := range 3 {
		procs = append(procs, startWorkerProc(t, workerConfig{
			Name: "p" + strconv.Itoa(w), Addr: client.Options().Addr, Namespace: ns, Crawl: "shop",
			Seeds: productSeeds(f, products), Parallelism: parallelism, Visibility: visibility,
			Cooldown: time.Minute, Poll: 20 * time.Millisecond,
		}, &ev))
	}
	victim := procs[0]
	deadline := time.Now().Add(30 * time.Second)
	for ev.count("done", func(e workerEvent) bool { return e.Worker == victim.name }) < 15 {
		if time.Now().After(deadline) {
			t.Fatalf("the victim never got going:\n%s", victim.stderr.raw())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := victim.cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = victim.wait(t, 10*time.Second)
	// What the victim had started and not finished when it died.
	open := map[string]bool{}
	for _, e := range ev.list() {
		if e.Worker != victim.name {
			continue
		}
		switch e.Ev {
		case "start":
			open[e.URL] = true
		case "done":
			delete(open, e.URL)
		}
	}
	if len(open) == 0 {
		t.Fatal("the victim held no job when it was killed; the test proves nothing")
	}
	for _, p := range procs[1:] {
		if err := p.wait(t, 60*time.Second); err != nil {
			t.Errorf("worker %s: %v\n%s", p.name, err, p.stderr.raw())
		}
	}
	// Each of the victim's jobs was done again by a survivor after the kill,
	// unless the victim had settled it: a worker acks a job and only then
	// reports it done, so a kill between the two leaves a started job that
	// is in fact finished. Such a job the store served healthy exactly once,
	// before the kill (had the ack not reached Redis, the job would have
	// come back, and the crawl ends only when every job is done).
	redoneAny := false
	for u := range open {
		var redone bool
		for _, e := range ev.list() {
			if e.URL == u && e.Worker != victim.name && e.Ev == "done" && e.At.After(killed) {
				redone = true
			}
		}
		redoneAny = redoneAny || redone
		if !redone && !servedOnceBefore(f, u, killed) {
			t.Errorf("%s, in flight at the killed worker, was neither done by another one after the kill nor finished by the victim before it", u)
		}
	}
	if !redoneAny {
		t.Error("no job of the victim's was done again by the others; the test proves nothing")
	}
	// The victim may have fetched its jobs without acking them: those few
	// pages are fetched twice (at least once, never lost).
	checkEveryProductOnce(t, f, products, client, inspect(t, client, ns, redis.Config{}), len(open)+1)
	t.Logf("killed %s holding %d started jobs; the survivors finished the crawl %v after the kill", victim.name, len(open), time.Since(killed).Round(time.Millisecond))
}

func (l *logBuffer) raw() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// servedOnceBefore reports whether the fleet answered u healthy exactly
// once, and before t.
func servedOnceBefore(f *testserver.Fleet, u string, t time.Time) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	for _, s := range f.Stores {
		if s.Host() != p.Host {
			continue
		}
		var n int
		var at time.Time
		for _, h := range s.Requests() {
			if h.Path == p.Path && !h.Failing() {
				n, at = n+1, h.Time
			}
		}
		return n == 1 && at.Before(t)
	}
	return false
}
