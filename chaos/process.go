package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/breakwater-crawl/breakwater/report"
)

// buildProductcrawl builds the productcrawl binary once into dir.
func buildProductcrawl(dir string) (string, error) {
	bin := filepath.Join(dir, "productcrawl")
	cmd := exec.Command("go", "build", "-o", bin, "./examples/productcrawl")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./examples/productcrawl: %w\n%s", err, out)
	}
	return bin, nil
}

// procRun says how one productcrawl process runs.
type procRun struct {
	resume bool
	killAt time.Duration  // > 0: send sig after that long
	sig    syscall.Signal // SIGKILL: the run is not judged; SIGQUIT: a crash, whose exit code is judged
	bound  time.Duration  // past it the run is hung (SIGKILL)
	redis  string         // the Redis URL of the crawl, "" for the checkpoint file
	worker int            // in Redis mode: the worker's number, for its own -out
	id     string         // in Redis mode: the crawl id
	fsize  int64          // > 0: no file it writes may grow past this many bytes (a full disk), through prlimit
	// horizon is the worker's -wait-horizon in Redis mode: 2 s keeps the
	// cases short; a case that loses Redis gives the 17 s it takes to
	// ride out a URL parked while Redis was unreachable (the breaker
	// store tries Redis again at most 15 s later, plus a tenth as
	// jitter), as productcrawl's 30 s default does.
	horizon time.Duration
}

// crawlProcess runs productcrawl over sites in dir, as pr says.
func crawlProcess(bin string, w Wiring, sites []*site, dir string, pr procRun) runOut {
	ro := runOut{exit: -1, carried: -1}
	args := []string{
		"--report", "json", "--log-level", "info", "--log-format", "json", "--status", "off",
		"--parallelism", strconv.Itoa(w.LimitP),
		"--timeout", w.Timeout.String(),
		"--profile", w.Profile.Name,
	}
	if pr.redis != "" {
		args = append(args, "--redis", pr.redis, "--crawl-id", pr.id, "--wait-horizon", pr.horizon.String(),
			"--out", filepath.Join(dir, fmt.Sprintf("products-%d.jsonl", pr.worker)))
	} else {
		args = append(args, "--checkpoint", filepath.Join(dir, "crawl.db"),
			"--out", filepath.Join(dir, "products.jsonl"))
	}
	if pr.resume {
		args = append(args, "--resume")
	}
	for _, s := range sites {
		args = append(args, s.url+"/")
	}
	killAt, sig, bound := pr.killAt, pr.sig, pr.bound
	cmd := exec.Command(bin, args...)
	if pr.fsize > 0 {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			ro.openErr = fmt.Errorf("a full-disk case needs prlimit (util-linux): %w", err)
			return ro
		}
		cmd = exec.Command(prlimit, append([]string{"--fsize=" + strconv.FormatInt(pr.fsize, 10), "--", bin}, args...)...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all") // a hung run's dump shows every goroutine
	if err := cmd.Start(); err != nil {
		ro.openErr = fmt.Errorf("start productcrawl: %w", err)
		return ro
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var kill <-chan time.Time
	if killAt > 0 {
		kill = time.After(killAt)
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	// What the process said, beside the case's other files (kept with -keep).
	defer func() {
		name := fmt.Sprintf("stderr-%d-%s.log", pr.worker, time.Now().Format("150405.000"))
		_ = os.WriteFile(filepath.Join(dir, name), stderr.Bytes(), 0o644)
	}()
	var err error
	select {
	case err = <-done:
	case <-kill:
		_ = cmd.Process.Signal(sig)
		err = <-done
		if sig == syscall.SIGKILL {
			ro.exit = -9
			return ro
		}
		ro.crashed = crashedBySignal(stderr.String())
	case <-timer.C:
		ro.hung = true
		// First a goroutine dump (Go's SIGQUIT) into the stderr kept with
		// -keep: where the run was waiting when its bound ran out.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
		return ro
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		ro.exit = 0
	case errors.As(err, &ee):
		ro.exit = ee.ExitCode()
	default:
		ro.openErr = err
		return ro
	}
	var rep report.Report
	if json.Unmarshal(stdout.Bytes(), &rep) == nil {
		ro.outcome = rep.Outcome
	}
	ro.report = lastLines(stderr.String(), 3)
	ro.handBacks = strings.Count(stderr.String(), `"event":"handed_back"`)
	return ro
}

// readProducts reads the URLs of every products*.jsonl in dir (one per
// Redis worker), a torn last line left out.
func readProducts(dir string) []string { return readProductsExcept(dir, "") }

// readProductsExcept is readProducts without the file named except.
func readProductsExcept(dir, except string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "products*.jsonl"))
	var urls []string
	for _, name := range files {
		if filepath.Base(name) == except {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.URL != "" {
				urls = append(urls, rec.URL)
			}
		}
		f.Close()
	}
	return urls
}

func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte(" | ")))
}

// crashedBySignal reports whether a SIGQUIT sent to a run crashed it: the
// run had not yet said how it ended. One that had (its run_finished
// event is on stderr) ended before the signal could crash it, and its
// exit code is that ending, however close the signal came.
func crashedBySignal(stderr string) bool {
	return !strings.Contains(stderr, `"event":"run_finished"`)
}
