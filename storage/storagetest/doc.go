// Package storagetest is the conformance suite for storage.Store backends.
//
// Every backend runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store { return memory.New() })
//	}
//
// Run checks the contract in the storage.Store documentation: upsert keeps
// Seq, reads see the caller's writes before any Flush, Scan order and state
// filter, Counts, metadata, validation, Close, concurrent use (run it
// under -race) and a few tens of thousands of records. Reopen checks that
// a persistent backend keeps everything across Close and open, and never
// reuses a Seq. A backend that is a storage.OutputStore has its outputs
// checked by Run too: one entry per URL and output, committed with the
// records, logs in order, concurrent writers.
package storagetest
