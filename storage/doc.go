// Package storage defines where Breakwater keeps the state of a crawl: one
// Record per URL, plus a little run metadata.
//
// A Store is an upsert-only table of Records keyed by Colly's request ID,
// in frontier order (Seq), with per-state counts and run metadata.
// Backends: storage/memory (no resume), storage/bolt (the embedded
// default), storage/redis (several machines); storage/storagetest is the
// conformance suite every backend passes. A backend that is also an
// OutputStore (bolt, redis) keeps what a crawl wrote for its URLs with
// their states, for extensions/checkpoint's Sink. Record.Validate,
// OutputEntry.Validate and ValidateMetaKey are the checks every backend
// makes.
//
// For a store that is also Colly's storage or queue (the checkpoint's,
// storage/redis's CollyStorage): Identify and ParseRequest give a
// request's URL and ID as Colly makes them, and VisitClaims settles
// Colly's two-call visited check between goroutines.
package storage
