// Package memory is a storage.Store held in memory: nothing survives the
// process. It suits tests, and crawls that do not need to resume.
//
// Records live in a slice in Seq order with a map from ID to position, so
// Put and Get are O(1) and Scan walks the slice once. A record's strings
// and bytes are kept in shared chunks, so that the store holds no pointer
// per record and the garbage collector has little to mark
// (BenchmarkGCOverRecords). The store copies everything in and out.
package memory
