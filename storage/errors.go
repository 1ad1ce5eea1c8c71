package storage

import "errors"

// Sentinel errors. Backends wrap them with the details (which file, what
// to do), so test with errors.Is.
var (
	// ErrClosed is returned by every method of a Store after Close.
	ErrClosed = errors.New("storage: store is closed")
	// ErrInvalid reports an argument a Store cannot accept: a record with
	// an invalid State or negative Attempts, a Scan for an invalid State,
	// an empty metadata key.
	ErrInvalid = errors.New("storage: invalid argument")
	// ErrCorrupt reports a checkpoint whose contents are damaged:
	// truncated, overwritten, failing a checksum. The backend leaves it
	// as it is.
	ErrCorrupt = errors.New("storage: checkpoint is corrupt")
	// ErrNotCheckpoint reports a file (or key space) that is something
	// other than a Breakwater checkpoint. The backend leaves it as it is.
	ErrNotCheckpoint = errors.New("storage: not a Breakwater checkpoint")
	// ErrNewerFormat reports a checkpoint written by a newer Breakwater
	// whose format this build cannot read. Upgrade to resume it.
	ErrNewerFormat = errors.New("storage: checkpoint format is newer than this build reads")
	// ErrLocked reports a checkpoint already open in another process (or
	// another Store in this one).
	ErrLocked = errors.New("storage: checkpoint is locked by another process")
)
