package bolt_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
)

const pageSize = 4096 // bbolt's page size on the platforms these tests run on

// refusedUntouched opens path, expects kind, and checks that the file's
// bytes did not change and nothing was created beside it.
func refusedUntouched(t *testing.T, path string, kind error, opts ...bolt.Option) {
	t.Helper()
	sum := fileSum(t, path)
	before, _ := os.ReadDir(filepath.Dir(path))
	s, err := bolt.Open(path, opts...)
	if err == nil {
		s.Close()
		t.Fatalf("Open(%s) accepted the file", path)
	}
	checkRefused(t, err, path, kind)
	if fileSum(t, path) != sum {
		t.Errorf("Open changed the bytes of a file it refused")
	}
	if after, _ := os.ReadDir(filepath.Dir(path)); len(after) != len(before) {
		t.Errorf("Open left files behind: %v -> %v", before, after)
	}
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenRefusesWhatIsNotACheckpoint(t *testing.T) {
	random := make([]byte, 64*1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	for name, content := range map[string][]byte{
		"text":   []byte("url,state\nhttp://127.0.0.1/,done\n"),
		"json":   []byte(`{"visited":[1,2,3]}`),
		"random": random,
		"zeros":  make([]byte, 3*pageSize),
	} {
		t.Run(name, func(t *testing.T) {
			refusedUntouched(t, writeFile(t, "crawl.db", content), storage.ErrNotCheckpoint)
		})
	}
	t.Run("directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "crawl.db")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := bolt.Open(dir)
		checkRefused(t, err, dir, storage.ErrNotCheckpoint)
	})
}

func TestOpenRefusesABoltFileOfSomethingElse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("users"))
		if err != nil {
			return err
		}
		return b.Put([]byte("alice"), []byte("admin"))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	refusedUntouched(t, path, storage.ErrNotCheckpoint)
}

// setFormat rewrites the format version of the checkpoint at path: the
// one it has plus delta.
func setFormat(t *testing.T, path string, delta int) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("breakwater"))
		v := int(binary.BigEndian.Uint32(b.Get([]byte("format"))))
		if v+delta < 1 {
			return fmt.Errorf("no format %d", v+delta)
		}
		return b.Put([]byte("format"), binary.BigEndian.AppendUint32(nil, uint32(v+delta)))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestOpenRefusesANewerFormat(t *testing.T) {
	path := makeCheckpoint(t, 50)
	setFormat(t, path, +1)
	refusedUntouched(t, path, storage.ErrNewerFormat)
}

// Format 1 was written by development builds only; this build refuses it
// rather than misread it.
func TestOpenRefusesAnOlderFormat(t *testing.T) {
	path := makeCheckpoint(t, 50)
	setFormat(t, path, -1)
	refusedUntouched(t, path, storage.ErrNotCheckpoint)
}

func TestOpenRefusesATruncatedCheckpoint(t *testing.T) {
	src := makeCheckpoint(t, 3000)
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt grows files ahead of their pages; find where the pages end.
	db, err := bbolt.Open(src, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	_ = db.View(func(tx *bbolt.Tx) error { used = tx.Size(); return nil })
	db.Close()
	for _, size := range []int64{0, 100, pageSize + 1, used / 2, used - pageSize} {
		t.Run(fmt.Sprintf("%d bytes of %d", size, used), func(t *testing.T) {
			refusedUntouched(t, writeFile(t, "crawl.db", full[:size]), storage.ErrCorrupt)
		})
	}
}

func TestOpenRefusesDamagedMetaPages(t *testing.T) {
	path := makeCheckpoint(t, 100)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range []int{0, 1} { // keep bbolt's marker, break the checksums
		off := page*pageSize + 16 + 4 + 4 + 4 + 4 // after magic, version, page size, flags
		for i := range 16 {
			b[off+i] ^= 0x5A
		}
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	refusedUntouched(t, path, storage.ErrCorrupt)
}

// findPage returns the offset of the page holding URL number i.
func findPage(t *testing.T, b []byte, i int) int {
	t.Helper()
	off := bytes.Index(b, []byte(rec(i, 0).URL+`"`)) // in the request JSON
	if off < 0 {
		t.Fatalf("record %d not found in the file", i)
	}
	return off
}

// A damaged record (bbolt's pages intact) is caught by its checksum: Get
// and Scan return ErrCorrupt, WithVerify refuses the file at Open, and the
// file is left as it was.
func TestDamagedRecordIsReportedNotReturned(t *testing.T) {
	path := makeCheckpoint(t, 3000)
	b, _ := os.ReadFile(path)
	b[findPage(t, b, 1500)+5] ^= 0x01
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, path)
	refusedUntouched(t, path, storage.ErrCorrupt, bolt.WithVerify())

	s := mustOpen(t, path) // the quick check reads only the first and last record
	if _, _, err := s.Get(rec(1500, 0).ID); !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("Get of the damaged record: %v, want ErrCorrupt naming the file", err)
	}
	if _, ok, err := s.Get(rec(1499, 0).ID); err != nil || !ok {
		t.Errorf("Get of an intact record: %v %v", ok, err)
	}
	if err := s.Scan(func(storage.Record) error { return nil }); !errors.Is(err, storage.ErrCorrupt) {
		t.Errorf("Scan over the damaged record: %v, want ErrCorrupt", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != sum {
		t.Errorf("opening and reading changed the file")
	}
}

// A damaged page makes bbolt panic; the panic must come back as
// ErrCorrupt from the method, not crash the crawl.
func TestBboltPanicOnDamagedPageBecomesErrCorrupt(t *testing.T) {
	path := makeCheckpoint(t, 3000)
	b, _ := os.ReadFile(path)
	page := findPage(t, b, 1500) / pageSize * pageSize
	binary.LittleEndian.PutUint64(b[page:], 0xDEADBEEF) // the page's own id: bbolt asserts it
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, path)
	refusedUntouched(t, path, storage.ErrCorrupt, bolt.WithVerify())

	s := mustOpen(t, path)
	err := s.Scan(func(storage.Record) error { return nil })
	if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "bbolt failed") {
		t.Errorf("Scan across a damaged page: %v, want ErrCorrupt from a recovered bbolt panic", err)
	}
	if _, _, err := s.Get(rec(1500, 0).ID); !errors.Is(err, storage.ErrCorrupt) {
		t.Errorf("Get on a damaged page: %v, want ErrCorrupt", err)
	}
	// The store still works for what is intact, and closes cleanly.
	if _, ok, err := s.Get(rec(0, 0).ID); err != nil || !ok {
		t.Errorf("Get of an intact record after a recovered panic: %v %v", ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != sum {
		t.Errorf("reading a damaged file changed it")
	}

	// Every data page overwritten: Open itself meets the damage.
	for i := 2 * pageSize; i < len(b); i++ {
		b[i] = 0xFF
	}
	refusedUntouched(t, writeFile(t, "crawl.db", b), storage.ErrCorrupt)
}

func TestSecondOpenerGetsErrLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	s := mustOpen(t, path)
	if err := s.Put(rec(1, storage.Pending)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := bolt.Open(path) // the default lock timeout, 1 s
		done <- err
	}()
	select {
	case err := <-done:
		checkRefused(t, err, path, storage.ErrLocked)
	case <-time.After(20 * time.Second):
		t.Fatal("a second Open of a locked file hangs")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, path) // released by Close
	if _, ok, err := s2.Get(rec(1, 0).ID); err != nil || !ok {
		t.Errorf("after the first store closed, the second finds %v %v", ok, err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	for name, opt := range map[string]bolt.Option{
		"interval": bolt.WithFlushInterval(-time.Second),
		"batch":    bolt.WithBatchSize(-1),
		"lock":     bolt.WithLockTimeout(-1),
	} {
		if _, err := bolt.Open(path, opt); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := bolt.Open(""); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("empty path: err = %v, want ErrInvalid", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a rejected Open created the file")
	}
}

func TestOpenInAPathThatCannotBeCreated(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, "plain", []byte("x"))
	for name, tc := range map[string]struct {
		path  string
		cause error
	}{
		"parent missing":   {filepath.Join(dir, "no", "such", "crawl.db"), fs.ErrNotExist},
		"parent is a file": {filepath.Join(file, "crawl.db"), syscall.ENOTDIR},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bolt.Open(tc.path)
			var fe *bolt.FileError
			if !errors.As(err, &fe) || fe.Path != tc.path || fe.Hint == "" || !errors.Is(err, tc.cause) {
				t.Errorf("err = %v, want a FileError naming %s, wrapping %v and saying what to do", err, tc.path, tc.cause)
			}
		})
	}
}

// A directory the process may not write to. Root ignores permission bits,
// so under root the attempt runs in a child process with the credentials
// of nobody (uid 65534), where the kernel enforces them.
func TestOpenInAnUnwritableDirectory(t *testing.T) {
	base, err := os.MkdirTemp("", "bw-unwritable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(base, 0o755); _ = os.RemoveAll(base) })
	ro := filepath.Join(base, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ro, "crawl.db")

	if os.Geteuid() != 0 {
		_, err := bolt.Open(path)
		var fe *bolt.FileError
		if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &fe) || !strings.Contains(err.Error(), "writable") {
			t.Fatalf("err = %v, want a FileError wrapping fs.ErrPermission", err)
		}
		return
	}
	// The test binary may sit in a directory nobody cannot enter: copy it.
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "bolt.test")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "BW_BOLT_HELPER=create", "BW_BOLT_ARGS="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = base
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Logf("stderr: %s", ee.Stderr)
		}
		t.Skipf("cannot run a child process as nobody here (%v); the permission path is covered when not root", err)
	}
	line := ""
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "BW:err "); ok {
			line = rest
		}
	}
	if !strings.HasPrefix(line, "true true ") || !strings.Contains(line, path) || !strings.Contains(line, "writable") {
		t.Errorf("as nobody, Open in a read-only directory said %q; want a FileError wrapping fs.ErrPermission that names the file", line)
	}
	if entries, _ := os.ReadDir(ro); len(entries) != 0 {
		t.Errorf("a refused Open left %v in the directory", entries)
	}
}
