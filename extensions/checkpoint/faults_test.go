package checkpoint_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/internal/childtest"
	"github.com/breakwater-crawl/breakwater/outcome"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
	"github.com/breakwater-crawl/breakwater/testserver"
)

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// finishedCheckpoint crawls a small store to its end and returns the
// closed checkpoint's path.
func finishedCheckpoint(t *testing.T) string {
	t.Helper()
	store := startStore(t, testserver.Config{Products: 20, PerPage: 20})
	path := dbPath(t)
	cp := openCP(t, path)
	cr := newCrawler(t, cp, nil, 2)
	_ = cr.c.Visit(store.URL() + "/")
	cr.c.Wait()
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every file Open cannot use is refused with an error that names it and
// says what to do, and is left byte for byte as it was.
func TestOpenRefusesBadFilesAndLeavesThemAlone(t *testing.T) {
	good := finishedCheckpoint(t)
	full, _ := os.ReadFile(good)
	newer := finishedCheckpoint(t)
	s, err := bolt.Open(newer, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.SetMeta("checkpoint/format", []byte("2"))
	_ = s.Close()
	// One bit of a record in the middle flipped: the first and last
	// records are whole, so only a check of every record finds it.
	// Every copy of it: bbolt keeps stale copies of pages it rewrote, and
	// only the live one is a record.
	middle := bytes.Clone(full)
	needle := []byte(testserver.ProductPath(10))
	found := 0
	for at := 0; ; {
		i := bytes.Index(middle[at:], needle)
		if i < 0 {
			break
		}
		middle[at+i+len(needle)-1] ^= 0x01
		at += i + len(needle)
		found++
	}
	if found == 0 {
		t.Fatal("product 10 not found in the checkpoint")
	}
	for _, tc := range []struct {
		name    string
		content []byte
		path    string
		kind    error
		says    string
	}{
		{"truncated", full[:4096+100], "", storage.ErrCorrupt, "move it aside"},
		{"empty", []byte{}, "", storage.ErrCorrupt, "move it aside"},
		{"a record damaged in the middle", middle, "", storage.ErrCorrupt, "move it aside"},
		{"not a checkpoint", []byte("url,state\nhttp://x/,done\n"), "", storage.ErrNotCheckpoint, "pass the path of a Breakwater checkpoint"},
		{"newer metadata format", nil, newer, storage.ErrNewerFormat, "release that wrote it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = filepath.Join(t.TempDir(), "crawl.db")
				if err := os.WriteFile(path, tc.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			sum := fileSum(t, path)
			cp, err := openFile(path, bolt.Config{})
			if err == nil {
				closeCP(cp)
				t.Fatalf("Open accepted the file")
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v; want %v, saying %q", err, tc.kind, tc.says)
			}
			if tc.kind != storage.ErrNewerFormat && !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v; want it to name %s", err, path)
			}
			if fileSum(t, path) != sum {
				t.Errorf("Open changed a file it refused")
			}
		})
	}
	if _, err := openFile(filepath.Join(good, "crawl.db"), bolt.Config{}); err == nil || !strings.Contains(err.Error(), good) {
		t.Errorf("a path under a file: %v, want an error naming it", err)
	}
	if _, err := openFile(dbPath(t), bolt.Config{}, checkpoint.Config{MaxAttempts: -1}); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("Config.MaxAttempts -1: %v, want ErrInvalid", err)
	}
}

// TestHelperProcess is the child side of the process tests; it does
// nothing unless BW_CP_HELPER names a mode.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("BW_CP_HELPER")
	if mode == "" {
		t.Skip("child process for the lock and disk-full tests")
	}
	if err := helperMain(mode, os.Getenv("BW_CP_PATH")); err != nil {
		childtest.Say("error %v", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func helperMain(mode, path string) error {
	switch mode {
	case "hold":
		cp, err := openFile(path, bolt.Config{})
		if err != nil {
			return err
		}
		defer closeCP(cp)
		childtest.Say("open")
		select {}
	case "diskfull":
		store, err := testserver.Start(testserver.Config{Products: 400, PerPage: 400, Scenario: testserver.Scenario{Latency: 2 * time.Millisecond}})
		if err != nil {
			return err
		}
		defer store.Close()
		var cr *crawler
		hooked := make(chan error, 1)
		cp, err := openFile(path, bolt.Config{}, checkpoint.Config{OnStoreError: func(err error) {
			cr.halt()
			select {
			case hooked <- err:
			default:
			}
		}})

		if err != nil {
			return err
		}
		cr = newCrawler(&testing.T{}, cp, nil, 2)
		done := make(chan struct{})
		go func() {
			_ = cr.c.Visit(store.URL() + "/")
			cr.c.Wait()
			close(done)
		}()
		// Once 50 products are done, make them durable, then let no
		// commit write again: a full disk.
		for {
			c, err := cp.Counts()
			if err != nil {
				return err
			}
			if c[storage.Done] >= 50 {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		// Counted before the Flush: everything counted is then durable
		// (counted after it, pages done meanwhile were not flushed).
		c, _ := cp.Counts()
		if err := cp.Flush(); err != nil {
			return err
		}
		childtest.Say("flushed %d", c[storage.Done])
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 2 * 4096, Max: 2 * 4096}); err != nil {
			return err
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			return errors.New("the crawl did not stop after the store failed")
		}
		select {
		case err := <-hooked:
			childtest.Say("hook %v", err)
		default:
			childtest.Say("hook none")
		}
		o := outcome.Decide(-1, cp)
		childtest.Say("outcome %s %s", o.State, strings.ReplaceAll(o.Reason, "\n", " "))
		childtest.Say("sent %d", store.Count())
		childtest.Say("close %v", closeCP(cp))
		return nil
	case "inflight":
		// Crawl the store at BW_CP_URL with 4 requests at a time until
		// inflightDone pages are done and 4 requests hang in flight; make
		// that durable, say so, and wait to be killed.
		cp, err := openFile(path, bolt.Config{})
		if err != nil {
			return err
		}
		cr := newCrawler(&testing.T{}, cp, nil, 4)
		go func() {
			_ = cr.c.Visit(os.Getenv("BW_CP_URL") + "/")
			cr.c.Wait()
		}()
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := cp.Counts()
			if err != nil {
				return err
			}
			if c[storage.Done] == inflightDone && c[storage.InFlight] == 4 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no 4 requests in flight after %d done: %v", inflightDone, c)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err := cp.Flush(); err != nil {
			return err
		}
		childtest.Say("inflight")
		select {} // until killed
	case "sinkcrawl":
		return sinkCrawlChild(path) // sink_test.go
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// helper starts this test binary in mode and returns its report lines.
func helper(t *testing.T, mode, path string) (*exec.Cmd, <-chan string) {
	t.Helper()
	return childtest.Start(t, "BW_CP_HELPER="+mode, "BW_CP_PATH="+path)
}

func next(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	return childtest.Next(t, lines, prefix)
}

// A second process opening a checkpoint in use is told so within about a
// second, and the file is not harmed.
func TestSecondProcessGetsALockedErrorWithinASecond(t *testing.T) {
	path := finishedCheckpoint(t)
	_, lines := helper(t, "hold", path)
	next(t, lines, "open")
	start := time.Now()
	_, err := openFile(path, bolt.Config{})
	took := time.Since(start)
	if !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), path) || took > 3*time.Second {
		t.Fatalf("Open of a checkpoint another process holds: %v after %v; want ErrLocked naming the file within about a second", err, took)
	}
}

// The disk fills mid-crawl: the store's error stops the crawl (the hook,
// and every new request aborted), the run is an error that names the
// file, and everything committed before is in the file, whole.
func TestFullDiskStopsTheCrawlAsAnErrorAndLosesNothingCommitted(t *testing.T) {
	path := dbPath(t)
	_, lines := helper(t, "diskfull", path)
	flushed, _ := strconv.Atoi(next(t, lines, "flushed"))
	hook := next(t, lines, "hook")
	outcomeLine := next(t, lines, "outcome")
	sent, _ := strconv.Atoi(next(t, lines, "sent"))
	closeErr := next(t, lines, "close")
	if hook == "none" || !strings.Contains(hook, path) || !strings.Contains(hook, "file too large") {
		t.Errorf("OnStoreError said %q; want the store's error naming the file", hook)
	}
	if !strings.HasPrefix(outcomeLine, "error ") || !strings.Contains(outcomeLine, path) {
		t.Errorf("outcome %q; want error, naming the file", outcomeLine)
	}
	if sent >= 401 {
		t.Errorf("the crawl went on to the end (%d requests) after the store failed", sent)
	}
	if closeErr == "<nil>" {
		t.Errorf("Close after a failed commit returned nil")
	}
	s, err := bolt.Open(path, bolt.Config{Verify: true})
	if err != nil {
		t.Fatalf("the checkpoint after a full disk: %v", err)
	}
	defer s.Close()
	c, _ := s.Counts()
	if c[storage.Done] < flushed {
		t.Errorf("%d done in the file, %d were flushed before the disk filled", c[storage.Done], flushed)
	}
}
