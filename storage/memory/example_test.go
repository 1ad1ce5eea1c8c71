package memory_test

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/memory"
)

// A crawl records each URL's state; on resume it re-drives what is not done.
func Example() {
	s := memory.New()
	defer s.Close()

	_ = s.Put(
		storage.Record{ID: 1, URL: "http://127.0.0.1/a", State: storage.Pending},
		storage.Record{ID: 2, URL: "http://127.0.0.1/b", State: storage.Pending},
		storage.Record{ID: 3, URL: "http://127.0.0.1/c", State: storage.Pending},
	)
	_ = s.Put(storage.Record{ID: 1, URL: "http://127.0.0.1/a", State: storage.Done, Attempts: 1})
	_ = s.Put(storage.Record{ID: 3, URL: "http://127.0.0.1/c", State: storage.Failed, Attempts: 1, LastError: "503"})

	counts, _ := s.Counts()
	fmt.Println(counts)
	_ = s.Scan(func(r storage.Record) error {
		fmt.Println(r.Seq, r.URL, r.State)
		return nil
	}, storage.Pending, storage.InFlight, storage.Failed, storage.Parked)
	// Output:
	// map[pending:1 done:1 failed:1]
	// 2 http://127.0.0.1/b pending
	// 3 http://127.0.0.1/c failed
}
