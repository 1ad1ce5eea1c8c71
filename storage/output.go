package storage

import "fmt"

// OutputStore is a Store that keeps, with the URLs' states, what a crawl
// wrote for them: extensions/checkpoint's Sink commits a URL's record with
// its done state through it, so that the record is written exactly once
// across kills, resumes and a fleet's workers. storage/bolt and
// storage/redis implement it; a Store that does not cannot back a Sink.
type OutputStore interface {
	Store

	// PutOutput puts recs and appends each of entries to its log, in one
	// atomic commit (a backend may split a large call into several, each
	// with the entries of its records), and returns once that is durable
	// (as Flush makes it). An entry whose ID already has one in its Output, in any
	// Part, or earlier in entries, is left out. It returns the entries it
	// appended, each with its Pos, in the order they were appended (the
	// order given, for the entries of one commit). Entries are
	// validated first (ErrInvalid: an empty Output or Data, a name over
	// MaxMetaKeyLen); then nothing is stored.
	PutOutput(entries []OutputEntry, recs ...Record) ([]OutputEntry, error)

	// ScanOutput calls fn for each entry of the log (output, part) in Pos
	// order, from the first, and returns fn's first error unchanged. It
	// holds no lock while fn runs.
	ScanOutput(output, part string, fn func(OutputEntry) error) error
}

// OutputEntry is what was written for one URL into one log of an output.
type OutputEntry struct {
	// Output names the output (a file, or a fleet's files): a URL has at
	// most one entry in it.
	Output string
	// Part names the log in Output that one writer appends to: a fleet's
	// worker, the same across its restarts. May be empty.
	Part string
	// ID is the Record ID of the URL it was written for.
	ID uint64
	// Data is what was written: one or more whole lines.
	Data []byte
	// Pos is its place in its log, from 0, set by PutOutput (a value
	// given to PutOutput is ignored).
	Pos uint64
}

// Validate reports (ErrInvalid) what makes e an entry no OutputStore
// accepts: an empty Output or Data, a name over MaxMetaKeyLen.
func (e *OutputEntry) Validate() error {
	switch {
	case e.Output == "":
		return fmt.Errorf("%w: output entry of record %d: empty output name", ErrInvalid, e.ID)
	case len(e.Data) == 0:
		return fmt.Errorf("%w: output entry of record %d: no data", ErrInvalid, e.ID)
	case len(e.Output) > MaxMetaKeyLen || len(e.Part) > MaxMetaKeyLen:
		return fmt.Errorf("%w: output entry of record %d: a name over %d bytes", ErrInvalid, e.ID, MaxMetaKeyLen)
	}
	return nil
}
