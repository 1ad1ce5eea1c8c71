// Package memory is a storage.Store held in maps: nothing survives the
// process. It suits tests, and crawls that do not need to resume.
//
// Records live in a slice in frontier (Seq) order with a map from ID to
// position, so Put and Get are O(1) and Scan walks the slice once. The
// store copies Request bytes and metadata values in and out, so neither
// the caller nor the store can change the other's data. Flush does
// nothing: there is nothing to make durable.
package memory
