// Package memory is a storage.Store held in memory: nothing survives the
// process. It suits tests, and crawls that do not need to resume.
//
// Records live in a slice in frontier (Seq) order with a map from ID to
// position, so Put and Get are O(1) and Scan walks the slice once. A
// record's URL, last error and request bytes are kept in shared
// chunks, and its times as numbers, so that the store holds no pointer per
// record: the garbage collector marks a few chunks instead of looking into
// every record, which for a crawl of millions of URLs would be most of its
// work (BenchmarkGCOverRecords). Values a Put replaces are compacted away
// once they outweigh the live ones. The store copies everything in and
// out, so neither the caller nor the store can change the other's data.
// Flush does nothing: there is nothing to make durable.
package memory
