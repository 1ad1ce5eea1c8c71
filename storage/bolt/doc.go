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
// Writes are buffered and committed in one atomic, fsynced bbolt
// transaction every 50 ms or 10,000 writes, so a crash costs at most the
// writes since the last commit and never leaves a record half-written;
// Flush and Close make everything durable at once (see Store). Open refuses a file
// that is damaged, not a checkpoint, of a newer format or in use by
// another process, without writing a byte to it, and says what to do (see
// Open and FileError).
package bolt
