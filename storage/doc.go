// Package storage defines where Breakwater keeps the state of a crawl: one
// Record per URL, plus a little run metadata.
//
// Colly marks a URL visited before it fetches it, so a visited set persisted
// as-is loses every URL that was in flight, refused or failed when the
// process stopped. Breakwater's checkpoint instead keeps a State per URL
// (Pending, InFlight, Done, Failed, Parked, Dead) in a Store, and after a
// restart only Done counts as visited; everything else that still has
// attempts left is queued again, in the order it was first seen (Seq).
//
// A Store is an upsert-only table of Records keyed by Colly's request ID,
// with a frontier order (Seq, assigned by the store on a record's first Put),
// per-state counts and a small key/value space for run metadata. It may
// buffer writes; Flush makes everything Put before it durable, and reads
// always see the caller's own writes.
//
// Backends live in sub-packages: storage/memory (maps, for tests and
// crawls that need no resume), storage/bolt (the embedded single-file
// default) and storage/redis (for crawls spread over several machines).
// storage/storagetest holds the conformance suite every backend passes.
package storage
