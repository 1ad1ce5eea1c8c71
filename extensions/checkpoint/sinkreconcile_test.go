package checkpoint_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/extensions/checkpoint"
	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
	"github.com/breakwater-crawl/breakwater/testserver"
)

// committed puts a done record and its entry in the default output for
// each of lines, as a run of the crawl would have, and returns the log's
// bytes.
func committed(t *testing.T, st storage.Store, lines ...string) []byte {
	t.Helper()
	var all []byte
	for i, l := range lines {
		id := uint64(100 + i)
		_, err := st.(storage.OutputStore).PutOutput(
			[]storage.OutputEntry{{Output: checkpoint.DefaultSinkName, ID: id, Data: []byte(l)}},
			storage.Record{ID: id, URL: "http://shop.example/" + l[:1], State: storage.Done})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, l...)
	}
	return all
}

// sinkOn opens the file at path read-write (with flags added), makes a
// Sink of cp on it and returns the Sink, the error and the file's bytes
// after.
func sinkOn(t *testing.T, cp *checkpoint.Checkpoint, path string, flags int) (*checkpoint.Sink, error, []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := cp.Sink(f, checkpoint.SinkConfig{})
	if err == nil {
		// What the program writes next lands at the end, whatever the flags.
		if _, werr := f.Write([]byte("next\n")); werr != nil {
			t.Fatal(werr)
		}
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		b = bytes.TrimSuffix(b, []byte("next\n"))
	}
	return s, err, b
}

// Making a Sink makes its file hold exactly what the checkpoint committed
// to the output: a last record cut short is cut off, what the file lacks
// is appended, what no commit accounts for after the records is cut off,
// and a file that is not the output is refused and left as it is.
func TestSinkReconcilesTheFileWithTheCheckpoint(t *testing.T) {
	log := []string{"{\"url\":\"a\"}\n", "{\"url\":\"b\"}\n{\"url\":\"b2\"}\n", "{\"url\":\"c\"}\n"}
	all := strings.Join(log, "")
	for _, tc := range []struct {
		name, file string
		log        []string
		flags      int
		want       checkpoint.SinkStats
		mismatch   bool
	}{
		{name: "no file yet", file: "", log: log, want: checkpoint.SinkStats{Earlier: 3, Restored: 3}},
		{name: "all there", file: all, log: log, want: checkpoint.SinkStats{Earlier: 3}},
		{name: "all there, opened to append", file: all, log: log, flags: os.O_APPEND, want: checkpoint.SinkStats{Earlier: 3}},
		{name: "killed before the last commit reached the file", file: log[0] + log[1], log: log, want: checkpoint.SinkStats{Earlier: 3, Restored: 1}},
		{name: "torn in the middle of a line", file: log[0] + log[1][:5], log: log, want: checkpoint.SinkStats{Earlier: 3, Restored: 2, TornBytes: 5}},
		{name: "torn between the lines of one page", file: log[0] + log[1][:13], log: log, want: checkpoint.SinkStats{Earlier: 3, Restored: 2, TornBytes: 13}},
		{name: "records no commit accounts for after the log", file: all + "{\"url\":\"d\"}\n{\"u", log: log, want: checkpoint.SinkStats{Earlier: 3, UncommittedBytes: 15}},
		{name: "another file", file: "id,title\n1,kettle\n", log: log, mismatch: true},
		{name: "a record changed", file: log[0] + strings.ToUpper(log[1]) + log[2], log: log, mismatch: true},
		{name: "a torn tail that is not the next record", file: log[0] + "{\"url\":\"x", log: log, mismatch: true},
		{name: "a file with records and a checkpoint with none", file: all, mismatch: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := openCP(t, dbPath(t))
			st := storeOf(t, cp)
			committed(t, st, tc.log...)
			path := filepath.Join(t.TempDir(), "products.jsonl")
			if tc.file != "" {
				if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err, got := sinkOn(t, cp, path, tc.flags)
			if tc.mismatch {
				if !errors.Is(err, checkpoint.ErrOutputMismatch) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v; want ErrOutputMismatch naming %s", err, path)
				}
				if string(got) != tc.file {
					t.Errorf("the refused file was changed: %q, was %q", got, tc.file)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(tc.log, ""); string(got) != want {
				t.Errorf("file %q; want the committed records %q", got, want)
			}
			if s.Stats() != tc.want {
				t.Errorf("stats %+v; want %+v", s.Stats(), tc.want)
			}
		})
	}
}

// A writer that cannot be read back (standard output, a pipe, a buffer)
// is given every record committed so far before this run's.
func TestSinkGivesAStreamEveryCommittedRecord(t *testing.T) {
	cp := openCP(t, dbPath(t))
	want := committed(t, storeOf(t, cp), "a\n", "b\n")
	var out bytes.Buffer
	s, err := cp.Sink(&out, checkpoint.SinkConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) || s.Stats().Restored != 2 {
		t.Errorf("stream %q, stats %+v; want %q, 2 restored", out.String(), s.Stats(), want)
	}
}

// A file open for writing only cannot be checked: one that is not empty
// is refused, with what to do.
func TestSinkRefusesAFileItCannotReadBack(t *testing.T) {
	cp := openCP(t, dbPath(t))
	committed(t, storeOf(t, cp), "a\n")
	path := filepath.Join(t.TempDir(), "products.jsonl")
	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := cp.Sink(f, checkpoint.SinkConfig{}); err == nil || !strings.Contains(err.Error(), "os.O_RDWR") {
		t.Errorf("err = %v; want one saying to open it with os.O_RDWR", err)
	}
}

// A store that cannot commit a page's records with its state is refused
// when the Sink is made, not at the first record.
func TestSinkNeedsAStoreThatKeepsOutputs(t *testing.T) {
	cp, err := checkpoint.New(memory.New(), checkpoint.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if _, err := cp.Sink(&bytes.Buffer{}, checkpoint.SinkConfig{}); !errors.Is(err, checkpoint.ErrNoOutput) || !strings.Contains(err.Error(), "storage/bolt") {
		t.Errorf("err = %v; want ErrNoOutput naming the stores that keep outputs", err)
	}
}

// One output has one Sink in a process; another output its own.
func TestSinkTwiceForOneOutputIsRefused(t *testing.T) {
	cp := openCP(t, dbPath(t))
	if _, err := cp.Sink(&bytes.Buffer{}, checkpoint.SinkConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Sink(&bytes.Buffer{}, checkpoint.SinkConfig{}); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("a second Sink of the default output: %v, want ErrInvalid", err)
	}
	if _, err := cp.Sink(&bytes.Buffer{}, checkpoint.SinkConfig{Name: "reviews"}); err != nil {
		t.Errorf("a Sink of another output: %v", err)
	}
}

// storeOf is the file store openCP opened under cp.
func storeOf(t *testing.T, cp *checkpoint.Checkpoint) storage.Store {
	t.Helper()
	s, ok := stores.Load(cp)
	if !ok {
		t.Fatal("no store under the checkpoint")
	}
	return s.(storage.Store)
}

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A file that cannot be written loses no record: the Sink reports the
// error (Write, Err) and the records stay committed in the checkpoint; the
// next run's Sink writes them.
func TestSinkWhoseFileFailsLosesNoRecord(t *testing.T) {
	store := startStore(t, testserver.Config{Products: 5, PerPage: 5})
	path := dbPath(t)
	cp := openCP(t, path)
	sink, err := cp.Sink(failingWriter{}, checkpoint.SinkConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sinkCrawl(t, cp, nil, sink, store)
	if err := closeCP(cp); err != nil {
		t.Fatal(err)
	}
	if err := sink.Err(); err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), "next run writes them") {
		t.Errorf("Err() = %v; want the write error, saying the next run writes the records", err)
	}
	cp = openCP(t, path)
	var out bytes.Buffer
	sink, err = cp.Sink(&out, checkpoint.SinkConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 10 || sink.Stats().Restored != 5 {
		t.Errorf("the next run's Sink wrote %d lines, stats %+v; want the 5 pages' 10 lines restored", n, sink.Stats())
	}
}
