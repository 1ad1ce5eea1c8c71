package bolt_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/bolt"
)

// A crawl is cut short; the next run opens the same file and re-drives
// only what did not finish.
func Example() {
	dir, err := os.MkdirTemp("", "breakwater-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "crawl.db")

	// First run.
	s, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		log.Fatal(err)
	}
	for i, u := range []string{"/a", "/b", "/c", "/d"} {
		_ = s.Put(storage.Record{ID: uint64(i + 1), URL: "http://127.0.0.1" + u, State: storage.Pending})
	}
	_ = s.Put(storage.Record{ID: 1, URL: "http://127.0.0.1/a", State: storage.Done, Attempts: 1})
	_ = s.Put(storage.Record{ID: 2, URL: "http://127.0.0.1/b", State: storage.InFlight, Attempts: 1})
	_ = s.SetMeta("run", []byte("tripped"))
	if err := s.Flush(); err != nil { // durable from here on, whatever happens next
		log.Fatal(err)
	}
	_ = s.Close()

	// Next run.
	s, err = bolt.Open(path, bolt.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	run, _, _ := s.Meta("run")
	fmt.Println("last run:", string(run))
	_ = s.Scan(func(r storage.Record) error {
		fmt.Println("re-drive", r.Seq, r.URL, r.State)
		return nil
	}, storage.Pending, storage.InFlight, storage.Failed, storage.Parked)

	// The file is locked while this store has it open.
	_, err = bolt.Open(path, bolt.Config{LockTimeout: 10 * time.Millisecond})
	fmt.Println("second opener locked out:", errors.Is(err, storage.ErrLocked))
	// Output:
	// last run: tripped
	// re-drive 2 http://127.0.0.1/b in-flight
	// re-drive 3 http://127.0.0.1/c pending
	// re-drive 4 http://127.0.0.1/d pending
	// second opener locked out: true
}

// Open refuses a file that is not a checkpoint, and leaves it alone.
func ExampleOpen_refused() {
	f, err := os.CreateTemp("", "notes-*.txt")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	fmt.Fprintln(f, "not a checkpoint")
	f.Close()

	_, err = bolt.Open(f.Name(), bolt.Config{})
	var fe *bolt.FileError
	fmt.Println(errors.Is(err, storage.ErrNotCheckpoint), errors.As(err, &fe) && fe.Path == f.Name())
	fmt.Println(fe.Hint)
	// Output:
	// true true
	// the file was left as it is; pass the path of a Breakwater checkpoint, or a path that does not exist yet to start a new one
}
