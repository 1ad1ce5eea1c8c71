package bolt

import (
	"errors"
	"slices"
	"strings"

	"github.com/breakwater-crawl/breakwater/storage"
)

// FileError is the error of Open and of a failed commit: which file, what
// was wrong, what to do. errors.Is sees Kind (a storage sentinel, or nil)
// and Err (the cause: fs.ErrPermission, ...).
type FileError struct {
	Path   string // the checkpoint file
	Kind   error  // a storage sentinel, or nil
	Detail string // what was found
	Hint   string // what to do
	Err    error  // the underlying error, or nil
}

func (e *FileError) Error() string {
	s := "storage/bolt: " + e.Path
	if e.Kind != nil {
		s += ": " + strings.TrimPrefix(e.Kind.Error(), "storage: ")
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns Kind and Err, those that are set.
func (e *FileError) Unwrap() []error {
	return slices.DeleteFunc([]error{e.Kind, e.Err}, func(err error) bool { return err == nil })
}

const (
	hintUntouched = "the file was left as it is"
	hintCorrupt   = hintUntouched + "; restore it from a copy, or move it aside to start the crawl afresh"
	hintForeign   = hintUntouched + "; pass the path of a Breakwater checkpoint, or a path that does not exist yet to start a new one"
	hintNewer     = hintUntouched + "; resume it with the Breakwater release that wrote it, or a newer one"
	hintOlder     = hintUntouched + "; move it aside to start the crawl afresh"
	hintInUse     = "found after Open, while this store may have been committing to the file; " + // not "left as it is"
		"restore it from a copy, or move it aside to start the crawl afresh"
	hintLocked = "another crawl, or another Store in this process, has it open; stop that one or use another file"
	hintCommit = "writes since the last successful flush are not durable and this store refuses further writes; " +
		"fix the cause (free disk space), then reopen the checkpoint: it resumes from the last successful flush"
)

func corruptError(path, detail string, err error) *FileError {
	return &FileError{Path: path, Kind: storage.ErrCorrupt, Detail: detail, Err: err, Hint: hintCorrupt}
}

func foreignError(path, detail string, err error) *FileError {
	return &FileError{Path: path, Kind: storage.ErrNotCheckpoint, Detail: detail, Err: err, Hint: hintForeign}
}

// inUse, deferred by an open store's methods, swaps hintCorrupt for hintInUse.
func inUse(err *error) {
	var fe *FileError
	if errors.As(*err, &fe) && fe.Hint == hintCorrupt {
		fe.Hint = hintInUse
	}
}
