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

// crawlProcess runs productcrawl over sites in dir. killAt > 0 sends it sig
// after that long (SIGKILL: the run is not judged; SIGQUIT: a crash, whose
// exit code is judged); bound ends it as hung (SIGKILL).
func crawlProcess(bin string, w Wiring, sites []*site, dir string, resume bool, killAt time.Duration, sig syscall.Signal, bound time.Duration) runOut {
	ro := runOut{exit: -1, carried: -1}
	args := []string{
		"--checkpoint", filepath.Join(dir, "crawl.db"),
		"--out", filepath.Join(dir, "products.jsonl"),
		"--report", "json", "--log-level", "warn", "--log-format", "json", "--status", "off",
		"--parallelism", strconv.Itoa(w.LimitP),
		"--timeout", w.Timeout.String(),
		"--profile", w.Profile.Name,
	}
	if resume {
		args = append(args, "--resume")
	}
	for _, s := range sites {
		args = append(args, s.url+"/")
	}
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Dir = dir
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
		ro.crashed = true
	case <-timer.C:
		ro.hung = true
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
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
	return ro
}

// readProducts reads the URLs of products.jsonl in dir, a torn last line
// left out.
func readProducts(dir string) []string {
	f, err := os.Open(filepath.Join(dir, "products.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var urls []string
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
	return urls
}

func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte(" | ")))
}
