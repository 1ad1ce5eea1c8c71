// Package bolt is the embedded, single-file storage.Store: Breakwater's
// default checkpoint, on go.etcd.io/bbolt.
//
//	s, err := bolt.Open("crawl.db")
//	if err != nil {
//		return err // *FileError: which file, what is wrong, what to do
//	}
//	defer s.Close() // after the checkpoint's Close
//	cp, err := checkpoint.New(s)
//
// Writes are committed in atomic, fsynced batches (see Store); Open refuses
// a file it cannot use without writing to it (see Open).
package bolt
