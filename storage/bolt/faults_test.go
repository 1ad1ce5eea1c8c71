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
func refusedUntouched(t *testing.T, path string, kind error, c bolt.Config) {
	t.Helper()
	sum := fileSum(t, path)
	before, _ := os.ReadDir(filepath.Dir(path))
	s, err := bolt.Open(path, c)
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
			refusedUntouched(t, writeFile(t, "crawl.db", content), storage.ErrNotCheckpoint, bolt.Config{})
		})
	}
	t.Run("directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "crawl.db")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := bolt.Open(dir, bolt.Config{})
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
	refusedUntouched(t, path, storage.ErrNotCheckpoint, bolt.Config{})
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
	refusedUntouched(t, path, storage.ErrNewerFormat, bolt.Config{})
}

// Format 1 was written by development builds only; this build refuses it
// rather than misread it.
func TestOpenRefusesAnOlderFormat(t *testing.T) {
	path := makeCheckpoint(t, 50)
	setFormat(t, path, -1)
	refusedUntouched(t, path, storage.ErrNotCheckpoint, bolt.Config{})
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
			refusedUntouched(t, writeFile(t, "crawl.db", full[:size]), storage.ErrCorrupt, bolt.Config{})
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
	refusedUntouched(t, path, storage.ErrCorrupt, bolt.Config{})
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

// findValue returns the offset of URL number i in its record value (what
// follows the URL there: the LastError length 0 and the request flag 1) or
// in its request value (the JSON's closing quote).
func findValue(t *testing.T, b []byte, i int, what string) int {
	t.Helper()
	after := `"`
	if what == "record" {
		after = "\x00\x01"
	}
	off := bytes.Index(b, []byte(rec(i, 0).URL+after))
	if off < 0 {
		t.Fatalf("the %s of URL %d not found in the file", what, i)
	}
	return off
}

// A damaged record or request in the middle of the file (bbolt's pages
// intact, the first and last records whole), done or not, is caught at
// Open by its checksum, with or without Config.Verify: Open refuses the file
// with ErrCorrupt naming it, and not a byte of it has changed.
func TestOpenRefusesADamagedRecordInTheMiddle(t *testing.T) {
	path := makeCheckpoint(t, 3000)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"record", "request"} {
		for _, i := range []int{1500, 1501} { // done, pending
			t.Run(fmt.Sprintf("%s of URL %d", what, i), func(t *testing.T) {
				b := bytes.Clone(full)
				b[findValue(t, b, i, what)+len(rec(i, 0).URL)-1] ^= 0x01
				damaged := writeFile(t, "crawl.db", b)
				refusedUntouched(t, damaged, storage.ErrCorrupt, bolt.Config{})
				refusedUntouched(t, damaged, storage.ErrCorrupt, bolt.Config{Verify: true})
			})
		}
	}
}

// damageOpen flips the bits mask of the byte at off in the file at path,
// in place, as a failing disk would while a store has it open.
func damageOpen(t *testing.T, path string, off int, mask byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := f.WriteAt(b, int64(off)); err != nil {
		t.Fatal(err)
	}
}

// checkFoundInUse asserts that err is ErrCorrupt naming path, and that
// its hint does not claim the file was left as it is: an open store may
// have committed to it since Open.
func checkFoundInUse(t *testing.T, err error, path, op string) {
	t.Helper()
	if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("%s: %v, want ErrCorrupt naming the file", op, err)
	}
	if err != nil && strings.Contains(err.Error(), "left as it is") {
		t.Errorf("%s: %q says the file was left as it is; the store may have written to it since Open", op, err)
	}
}

// A record damaged while the store has the file open (bbolt's pages
// intact) is caught by its checksum: Get and Scan return ErrCorrupt naming
// the file, without claiming the file was left as it is, and the store
// goes on serving what is intact.
func TestDamageAfterOpenIsReportedNotReturned(t *testing.T) {
	path := makeCheckpoint(t, 3000)
	b, _ := os.ReadFile(path)
	s := mustOpen(t, path, bolt.Config{})
	damageOpen(t, path, findPage(t, b, 1500)+5, 0x01)
	sum := fileSum(t, path)
	_, _, err := s.Get(rec(1500, 0).ID)
	checkFoundInUse(t, err, path, "Get of the damaged record")
	if _, ok, err := s.Get(rec(1499, 0).ID); err != nil || !ok {
		t.Errorf("Get of an intact record: %v %v", ok, err)
	}
	checkFoundInUse(t, s.Scan(func(storage.Record) error { return nil }), path, "Scan over the damaged record")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != sum {
		t.Errorf("reading changed the file")
	}
	refusedUntouched(t, path, storage.ErrCorrupt, bolt.Config{})
}

// A damaged page makes bbolt panic; the panic must come back as
// ErrCorrupt from the method, not crash the crawl. Open meets it in its
// check and refuses the file; a store that has the file open when the
// page goes bad reports it from Scan and Get.
func TestBboltPanicOnDamagedPageBecomesErrCorrupt(t *testing.T) {
	path := makeCheckpoint(t, 3000)
	b, _ := os.ReadFile(path)
	page := findPage(t, b, 1500) / pageSize * pageSize
	damaged := bytes.Clone(b)
	binary.LittleEndian.PutUint64(damaged[page:], 0xDEADBEEF) // the page's own id: bbolt asserts it
	refusedUntouched(t, writeFile(t, "crawl.db", damaged), storage.ErrCorrupt, bolt.Config{})
	refusedUntouched(t, writeFile(t, "crawl.db", damaged), storage.ErrCorrupt, bolt.Config{Verify: true})

	s := mustOpen(t, path, bolt.Config{})
	for i := range 4 { // the same page id, damaged in place under the open store
		damageOpen(t, path, page+i, byte(uint32(0xDEADBEEF)>>(8*i))^b[page+i])
	}
	err := s.Scan(func(storage.Record) error { return nil })
	checkFoundInUse(t, err, path, "Scan across a damaged page")
	if err == nil || !strings.Contains(err.Error(), "bbolt failed") {
		t.Errorf("Scan across a damaged page: %v, want ErrCorrupt from a recovered bbolt panic", err)
	}
	_, _, err = s.Get(rec(1500, 0).ID)
	checkFoundInUse(t, err, path, "Get on a damaged page")
	// The store still works for what is intact, and closes cleanly.
	if _, ok, err := s.Get(rec(0, 0).ID); err != nil || !ok {
		t.Errorf("Get of an intact record after a recovered panic: %v %v", ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Every data page overwritten: Open itself meets the damage.
	for i := 2 * pageSize; i < len(b); i++ {
		b[i] = 0xFF
	}
	refusedUntouched(t, writeFile(t, "crawl.db", b), storage.ErrCorrupt, bolt.Config{})
}

func TestSecondOpenerGetsErrLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	s := mustOpen(t, path, bolt.Config{})
	if err := s.Put(rec(1, storage.Pending)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := bolt.Open(path, bolt.Config{}) // the default lock timeout, 1 s
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
	s2 := mustOpen(t, path, bolt.Config{}) // released by Close
	if _, ok, err := s2.Get(rec(1, 0).ID); err != nil || !ok {
		t.Errorf("after the first store closed, the second finds %v %v", ok, err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	for name, opt := range map[string]bolt.Config{
		"interval": {FlushInterval: -time.Second},
		"batch":    {BatchSize: -1},
		"lock":     {LockTimeout: -1},
	} {
		if _, err := bolt.Open(path, opt); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := bolt.Open("", bolt.Config{}); !errors.Is(err, storage.ErrInvalid) {
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
			_, err := bolt.Open(tc.path, bolt.Config{})
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
		_, err := bolt.Open(path, bolt.Config{})
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
