package bolt_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
)

// TestHelperProcess is the child side of the process tests. It does nothing
// unless BW_BOLT_HELPER names a mode.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("BW_BOLT_HELPER")
	if mode == "" {
		t.Skip("child process for the crash and permission tests")
	}
	args := strings.Split(os.Getenv("BW_BOLT_ARGS"), "\x1f")
	if err := runHelper(mode, args); err != nil {
		say("error %v", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func runHelper(mode string, args []string) error {
	path := args[0]
	switch mode {
	case "crash":
		// Flush a first batch, say so, then write without end until killed.
		s, err := bolt.Open(path, bolt.Config{FlushInterval: 2 * time.Millisecond, BatchSize: 500})
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(args[1])
		for i := range n {
			if err := s.Put(rec(i, storage.Done)); err != nil {
				return err
			}
		}
		if err := s.SetMeta("phase", []byte("flushed")); err != nil {
			return err
		}
		if err := s.Flush(); err != nil {
			return err
		}
		say("flushed")
		for i := n; ; i++ { // new records, and old ones moved back and forth
			r := rec(i, storage.Pending)
			r.Request = make([]byte, 2000) // big values: commits take a while
			if err := s.Put(r, rec(i%n, storage.Failed), rec((i+1)%n, storage.Done)); err != nil {
				return err
			}
		}
	case "interval":
		// Put without Flush, say so, and wait to be killed.
		s, err := bolt.Open(path, bolt.Config{FlushInterval: 20 * time.Millisecond})
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(args[1])
		for i := range n {
			if err := s.Put(rec(i, storage.InFlight)); err != nil {
				return err
			}
		}
		say("put")
		select {}
	case "diskfull":
		// Commit a first batch, then cap the file size so the next commit
		// fails like a full disk, and report what the store does.
		s, err := bolt.Open(path, bolt.Config{FlushInterval: time.Hour})
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(args[1])
		for i := range n {
			if err := s.Put(rec(i, storage.Done)); err != nil {
				return err
			}
		}
		if err := s.Flush(); err != nil {
			return err
		}
		// Linux refuses any write at or past the limit with EFBIG, even
		// inside the file's current size (bbolt grows the file ahead of
		// its pages). At the two meta pages, every data page a commit
		// writes fails, as block allocation fails on a full disk.
		signal.Ignore(syscall.SIGXFSZ)
		const limit = 2 * 4096
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			return fmt.Errorf("setrlimit: %w", err)
		}
		for i := n; i < n+2000; i++ {
			r := rec(i, storage.Pending)
			r.Request = make([]byte, 1000)
			if err := s.Put(r); err != nil {
				return fmt.Errorf("Put before the failing commit: %w", err)
			}
		}
		ferr := s.Flush()
		say("flush %v", ferr)
		perr := s.Put(rec(0, storage.Failed))
		say("sticky %t", ferr != nil && errors.Is(perr, ferr) && errors.Is(s.Flush(), ferr))
		if r, ok, err := s.Get(rec(n+5, 0).ID); err != nil || !ok || r.State != storage.Pending {
			return fmt.Errorf("reads after a failed commit: %v %v %v", r.State, ok, err)
		}
		say("close %v", s.Close())
		return nil
	case "create":
		// Try to create a checkpoint (run as an unprivileged user).
		_, err := bolt.Open(path, bolt.Config{})
		var fe *bolt.FileError
		say("err %t %t %v", errors.Is(err, fs.ErrPermission), errors.As(err, &fe), err)
		return nil
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// A process killed with SIGKILL while it writes leaves a checkpoint that
// opens, passes the full check, and holds everything flushed before the kill.
func TestKillAfterFlushLosesNothingFlushed(t *testing.T) {
	const n = 1000
	for _, delay := range []time.Duration{0, 15 * time.Millisecond, 120 * time.Millisecond} {
		t.Run(fmt.Sprintf("killed %v after Flush", delay), func(t *testing.T) {
			path := t.TempDir() + "/crawl.db"
			cmd, lines := helper(t, "crash", path, strconv.Itoa(n))
			waitLine(t, lines, "flushed")
			// While the child holds it, the file is locked across processes.
			if _, err := bolt.Open(path, bolt.Config{LockTimeout: 100 * time.Millisecond}); !errors.Is(err, storage.ErrLocked) {
				t.Errorf("Open while another process has the file: %v, want ErrLocked", err)
			}
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()

			s := mustOpen(t, path, bolt.Config{Verify: true})
			var maxSeq uint64
			err := s.Scan(func(r storage.Record) error {
				maxSeq = max(maxSeq, r.Seq)
				return nil
			})
			if err != nil {
				t.Fatalf("Scan after kill: %v", err)
			}
			for i := range n {
				r, ok, err := s.Get(rec(i, 0).ID)
				if err != nil || !ok {
					t.Fatalf("flushed record %d lost: %v %v", i, ok, err)
				}
				if r.State != storage.Done && r.State != storage.Failed {
					t.Fatalf("flushed record %d in state %v", i, r.State)
				}
			}
			if v, ok, _ := s.Meta("phase"); !ok || string(v) != "flushed" {
				t.Errorf("flushed metadata lost: %q %v", v, ok)
			}
			if err := s.Put(rec(-1, storage.Pending)); err != nil {
				t.Fatal(err)
			}
			if r, _, _ := s.Get(rec(-1, 0).ID); r.Seq <= maxSeq {
				t.Errorf("new record after the crash got Seq %d, not above %d", r.Seq, maxSeq)
			}
		})
	}
}

// Without Flush, the background commit makes a Put durable within the
// flush interval: the child puts, waits well past its 20 ms interval, and
// is killed.
func TestKillAfterIntervalKeepsUnflushedPuts(t *testing.T) {
	const n = 300
	path := t.TempDir() + "/crawl.db"
	cmd, lines := helper(t, "interval", path, strconv.Itoa(n))
	waitLine(t, lines, "put")
	time.Sleep(500 * time.Millisecond) // 25 intervals
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s := mustOpen(t, path, bolt.Config{Verify: true})
	c, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if c[storage.InFlight] != n {
		t.Errorf("after kill: %v, want %d in flight", c, n)
	}
}

// A commit that cannot write (the file may not grow: a full disk, as the
// kernel reports it with RLIMIT_FSIZE) fails, the failure is sticky, reads
// still work, and the file keeps the last commit whole.
func TestFullDiskIsStickyAndLosesNothingCommitted(t *testing.T) {
	const n = 500
	path := t.TempDir() + "/crawl.db"
	_, lines := helper(t, "diskfull", path, strconv.Itoa(n))
	ferr := waitLine(t, lines, "flush")
	if ferr == "<nil>" {
		t.Fatal("Flush past the file size limit succeeded")
	}
	if !strings.Contains(ferr, path) || !strings.Contains(ferr, "file too large") {
		t.Errorf("flush error %q should name the file and the cause", ferr)
	}
	if got := waitLine(t, lines, "sticky"); got != "true" {
		t.Errorf("the commit error is not sticky: later Put and Flush did not return it")
	}
	if got := waitLine(t, lines, "close"); got == "<nil>" {
		t.Errorf("Close after a failed commit returned nil; it must report that writes were lost")
	}
	s := mustOpen(t, path, bolt.Config{Verify: true})
	c, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if c[storage.Done] != n || len(c) != 1 {
		t.Errorf("after the failed commit the file holds %v, want the %d committed done records only", c, n)
	}
}
