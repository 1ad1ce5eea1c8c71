// Package storage defines where Breakwater keeps the state of a crawl: one
// Record per URL, plus a little run metadata.
//
// A Store is an upsert-only table of Records keyed by Colly's request ID,
// with a frontier order (Seq, assigned by the store on a record's first
// Put), per-state counts and a small key/value space for run metadata.
// Breakwater's checkpoint keeps a State per URL in it, so that after a
// restart only what is finished counts as visited.
//
// Backends live in sub-packages: storage/memory (for tests and crawls that
// need no resume), storage/bolt (the embedded single-file default) and
// storage/redis (for crawls spread over several machines).
// storage/storagetest holds the conformance suite every backend passes.
package storage
