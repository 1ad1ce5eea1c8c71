// Package bolt is the embedded, single-file storage.Store: Breakwater's
// default checkpoint, on go.etcd.io/bbolt.
//
//	s, err := bolt.Open("crawl.db")
//	if err != nil {
//		return err // *FileError: which file, what is wrong, what to do
//	}
//	defer s.Close() // after the checkpoint's Close
//	cp, err := checkpoint.New(s, checkpoint.Config{})
//
// The store is safe for concurrent use. Put and SetMeta buffer (latest per
// ID wins); reads see them at once. A background loop commits in one
// atomic, fsynced transaction every Config.FlushInterval or
// Config.BatchSize writes: a Put is durable after that commit, or once
// Flush or Close returns nil; PutOutput (storage.OutputStore, for
// extensions/checkpoint's Sink) commits at once and returns after the
// commit. A crash leaves the last commit, every record
// whole. A failed commit (disk full) is sticky: Put, SetMeta and Flush
// return it (a *FileError), reads go on, the file keeps the last commit;
// reopen once the cause is fixed. Put blocks while four batches are
// buffered. Every record's ID, Seq and state stay in memory (20 to 40 MB a
// million URLs); docs/checkpoints.md describes the file. Open refuses a
// file it cannot use without writing to it (see Open).
package bolt
