package storage

import "errors"

// Sentinel errors, wrapped with details by backends: test with errors.Is.
var (
	// ErrClosed is returned by every method of a Store after Close.
	ErrClosed = errors.New("storage: store is closed")
	// ErrInvalid reports an argument a Store cannot accept (an invalid
	// State, negative Attempts, an empty metadata key).
	ErrInvalid = errors.New("storage: invalid argument")
	// ErrCorrupt reports a damaged checkpoint (truncated, failing a
	// checksum), which the backend leaves as it is.
	ErrCorrupt = errors.New("storage: checkpoint is corrupt")
	// ErrNotCheckpoint reports a file (or key space) that is not a
	// Breakwater checkpoint, which the backend leaves as it is.
	ErrNotCheckpoint = errors.New("storage: not a Breakwater checkpoint")
	// ErrNewerFormat reports a checkpoint of a newer format: upgrade.
	ErrNewerFormat = errors.New("storage: checkpoint format is newer than this build reads")
	// ErrLocked reports a checkpoint open in another process or Store.
	ErrLocked = errors.New("storage: checkpoint is locked by another process")
)
