// Package memory is a storage.Store held in memory: nothing survives the
// process. It suits tests, and crawls that do not need to resume.
//
// Records live in a slice in Seq order, their strings and bytes in shared
// chunks, so the garbage collector has little to mark. The store copies
// everything in and out.
package memory
