package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"

	bbolt "go.etcd.io/bbolt"
	bberrors "go.etcd.io/bbolt/errors"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

// Open opens the checkpoint at path, creating it if no file is there. It
// never writes to a file it has not checked (docs/checkpoints.md); one it
// cannot use is refused with a *FileError wrapping
//
//   - storage.ErrCorrupt: empty, truncated or otherwise damaged;
//   - storage.ErrNotCheckpoint: not a bbolt database, not a checkpoint, or
//     of format 1, which only development builds wrote;
//   - storage.ErrNewerFormat: of a newer format;
//   - storage.ErrLocked: open in another process, or in this one, after
//     Config.LockTimeout.
//
// Damage met later is returned by the store's methods as storage.ErrCorrupt.
func Open(path string, c Config) (storage.Store, error) {
	o, err := resolve(c)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("%w: storage/bolt: empty checkpoint path", storage.ErrInvalid)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := create(path, &o); err != nil {
			return nil, err
		}
	case errors.Is(err, syscall.ENOTDIR):
		return nil, &FileError{Path: path, Detail: "cannot create the checkpoint", Err: err,
			Hint: "part of the path is a file, not a directory; choose another path"}
	case err != nil:
		return nil, &FileError{Path: path, Detail: "cannot read the checkpoint", Err: err,
			Hint: "check the path and its permissions"}
	case fi.IsDir():
		return nil, foreignError(path, "it is a directory", nil)
	case !fi.Mode().IsRegular():
		return nil, foreignError(path, "it is not a regular file ("+fi.Mode().Type().String()+")", nil)
	}
	if err := inspect(path, &o); err != nil {
		return nil, err
	}
	db, err := openDB(path, &o, false)
	if err != nil {
		return nil, err
	}
	s, err := newStore(path, db, o)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// create builds a checkpoint beside path and links it there (or opens a rival's).
func create(path string, o *Config) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".new-*")
	if err != nil {
		return &FileError{Path: path, Detail: "cannot create the checkpoint", Err: err,
			Hint: "check that the directory exists and is writable, or choose another path"}
	}
	tmp := f.Name()
	defer os.Remove(tmp) // path, once linked, keeps the file
	if err := f.Close(); err != nil {
		return &FileError{Path: path, Detail: "cannot create the checkpoint", Err: err}
	}
	db, err := bbolt.Open(tmp, 0o600, &bbolt.Options{Timeout: o.LockTimeout})
	if err == nil {
		err = db.Update(initLayout)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return &FileError{Path: path, Detail: "cannot write a new checkpoint", Err: err,
			Hint: "check free space and permissions in " + dir}
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // someone else won the race; open theirs
		}
		// Filesystems without hard links: rename, unless path appeared.
		if _, serr := os.Stat(path); serr == nil {
			return nil
		}
		if err := os.Rename(tmp, path); err != nil {
			return &FileError{Path: path, Detail: "cannot move the new checkpoint into place", Err: err,
				Hint: "check that the directory is writable"}
		}
	}
	if d, err := os.Open(dir); err == nil { // make the new name durable
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

func initLayout(tx *bbolt.Tx) error {
	for _, name := range [][]byte{bucketFormat, bucketRecords, bucketRequests, bucketIDs, bucketStates, bucketMeta} {
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	b := tx.Bucket(bucketFormat)
	var zero backend.Tally
	for _, kv := range [][2][]byte{
		{keyMagic, []byte(formatMagic)},
		{keyFormat, binary.BigEndian.AppendUint32(nil, formatVersion)},
		{keyNextSeq, seqKey(1)},
		{keyCounts, encodeCounts(&zero)},
	} {
		if err := b.Put(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// openDB opens path with bbolt, mapping failures and panics onto FileErrors;
// on a panic it closes the file bbolt opened, which would leak its lock.
func openDB(path string, o *Config, readOnly bool) (db *bbolt.DB, err error) {
	var file *os.File // bbolt opens it in this goroutine
	mmapSize := 0     // a writer maps 1 GB of address space up front: no remaps while the file grows
	if !readOnly && strconv.IntSize == 64 {
		mmapSize = 1 << 30
	}
	defer func(prev bool) {
		debug.SetPanicOnFault(prev)
		if r := recover(); r != nil {
			if file != nil {
				_ = file.Close()
			}
			db, err = nil, corruptError(path, fmt.Sprintf("bbolt failed while opening it (%v)", r), nil)
		}
	}(debug.SetPanicOnFault(true))
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{
		ReadOnly:        readOnly,
		Timeout:         o.LockTimeout,
		FreelistType:    bbolt.FreelistMapType,
		InitialMmapSize: mmapSize,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			if readOnly {
				flag = os.O_RDONLY
			} else {
				flag &^= os.O_CREATE // Open made sure the file exists; never create here
			}
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		},
	})
	if err == nil {
		return db, nil
	}
	switch {
	case errors.Is(err, bberrors.ErrTimeout):
		return nil, &FileError{Path: path, Kind: storage.ErrLocked,
			Detail: fmt.Sprintf("gave up after %v", o.LockTimeout), Hint: hintLocked}
	case errors.Is(err, bberrors.ErrInvalid), errors.Is(err, bberrors.ErrChecksum),
		errors.Is(err, bberrors.ErrVersionMismatch):
		if looksLikeBolt(path) {
			return nil, corruptError(path, "both bbolt meta pages are damaged", err)
		}
		return nil, foreignError(path, "it is not a bbolt database", err)
	case errors.Is(err, fs.ErrPermission):
		return nil, &FileError{Path: path, Detail: "cannot open the checkpoint", Err: err,
			Hint: "check the file's permissions: the crawl needs to read and write it"}
	case looksLikeBolt(path):
		// bbolt has other, unexported refusals ("file size too small").
		return nil, corruptError(path, "bbolt cannot open it", err)
	}
	return nil, &FileError{Path: path, Detail: "cannot open the checkpoint", Err: err}
}

// boltMagic is bbolt's marker after each meta page's 16-byte header.
const boltMagic = 0xED0CDAED

// looksLikeBolt reports whether a meta page (any page size) has bbolt's marker.
func looksLikeBolt(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	for _, off := range []int64{0, 1024, 2048, 4096, 8192, 16384, 32768, 65536} {
		if _, err := f.ReadAt(b[:], off+16); err != nil && err != io.EOF {
			continue
		}
		if binary.LittleEndian.Uint32(b[:]) == boltMagic {
			return true
		}
	}
	return false
}

// inspect checks, read-only, that path is a checkpoint this build can use.
func inspect(path string, o *Config) error {
	fi, err := os.Stat(path)
	if err != nil {
		return &FileError{Path: path, Detail: "cannot read the checkpoint", Err: err}
	}
	if fi.Size() == 0 {
		return corruptError(path, "the file is empty (a checkpoint never is: it is created whole)", nil)
	}
	db, err := openDB(path, o, true)
	if err != nil {
		return err
	}
	defer db.Close()
	return viewGuarded(db, path, "inspect", func(tx *bbolt.Tx) error {
		return check(tx, path, fi.Size(), o.Verify)
	})
}

// viewGuarded runs fn in a read transaction, a panic in bbolt (a corrupt
// page, a fault on the mapped file) ErrCorrupt.
func viewGuarded(db *bbolt.DB, path, op string, fn func(*bbolt.Tx) error) (err error) {
	defer func(prev bool) {
		debug.SetPanicOnFault(prev)
		if r := recover(); r != nil {
			err = corruptError(path, fmt.Sprintf("%s: bbolt failed reading it (%v)", op, r), nil)
		}
	}(debug.SetPanicOnFault(true))
	tx, err := db.Begin(false)
	if err != nil {
		return &FileError{Path: path, Detail: "cannot read the checkpoint", Err: err}
	}
	defer tx.Rollback()
	return fn(tx)
}

func check(tx *bbolt.Tx, path string, size int64, verify bool) error {
	if need := tx.Size(); size < need {
		return corruptError(path, fmt.Sprintf("the file is %d bytes but its pages reach %d: it was truncated", size, need), nil)
	}
	f := tx.Bucket(bucketFormat)
	if f == nil || string(f.Get(keyMagic)) != formatMagic {
		return foreignError(path, "a bbolt database without Breakwater's format bucket", nil)
	}
	v := f.Get(keyFormat)
	if len(v) != 4 {
		return corruptError(path, "the format version is missing", nil)
	}
	if ver := binary.BigEndian.Uint32(v); ver > formatVersion {
		return &FileError{Path: path, Kind: storage.ErrNewerFormat,
			Detail: fmt.Sprintf("format %d; this build reads up to %d", ver, formatVersion), Hint: hintNewer}
	} else if ver == 0 {
		return corruptError(path, "format version 0", nil)
	} else if ver < formatVersion {
		return &FileError{Path: path, Kind: storage.ErrNotCheckpoint,
			Detail: fmt.Sprintf("format %d, written by a development build; this build reads format %d", ver, formatVersion), Hint: hintOlder}
	}
	if len(f.Get(keyNextSeq)) != 8 {
		return corruptError(path, "the next-seq counter is missing", nil)
	}
	var counts backend.Tally
	if !decodeCounts(f.Get(keyCounts), &counts) {
		return corruptError(path, "the state counts are missing", nil)
	}
	for _, name := range [][]byte{bucketRecords, bucketRequests, bucketIDs, bucketStates, bucketMeta} {
		if tx.Bucket(name) == nil {
			return corruptError(path, fmt.Sprintf("bucket %q is missing", name), nil)
		}
	}
	err := checkRecords(tx, path, &counts, binary.BigEndian.Uint64(f.Get(keyNextSeq)))
	if err == nil && verify {
		err = verifyAll(tx, path, &counts)
	}
	return err
}

// checkRecords walks records and requests side by side, checking checksums,
// requests, Seqs and the count, allocating nothing.
func checkRecords(tx *bbolt.Tx, path string, counts *backend.Tally, nextSeq uint64) error {
	total := 0
	for _, n := range counts {
		total += n
	}
	rc, qc := tx.Bucket(bucketRecords).Cursor(), tx.Bucket(bucketRequests).Cursor()
	qk, qv := qc.First()
	records := 0
	for k, v := rc.First(); k != nil; k, v = rc.Next() {
		if len(k) != 8 {
			return corruptError(path, fmt.Sprintf("record key of %d bytes", len(k)), nil)
		}
		seq := binary.BigEndian.Uint64(k)
		if seq == 0 || seq >= nextSeq {
			return corruptError(path, fmt.Sprintf("record %d, outside the Seqs given out (1 to %d)", seq, nextSeq-1), nil)
		}
		hasReq, err := verify(v)
		if err != nil {
			return recordError(path, seq, err)
		}
		if qk != nil && bytes.Compare(qk, k) < 0 {
			return corruptError(path, fmt.Sprintf("a request stored under key %x, which has no record", qk), nil)
		}
		switch {
		case hasReq && !bytes.Equal(qk, k):
			return corruptError(path, fmt.Sprintf("record %d has a request, which is missing", seq), nil)
		case !hasReq && bytes.Equal(qk, k):
			return corruptError(path, fmt.Sprintf("record %d has no request, but one is stored under its Seq", seq), nil)
		case hasReq:
			if _, err := checked(k, qv); err != nil {
				return recordError(path, seq, fmt.Errorf("%w: its request: %w", errBadRecord, err))
			}
			qk, qv = qc.Next()
		}
		records++
	}
	if qk != nil {
		return corruptError(path, fmt.Sprintf("a request stored under key %x, which has no record", qk), nil)
	}
	if records != total {
		return corruptError(path, fmt.Sprintf("%d records, the counts say %d", records, total), nil)
	}
	return nil
}

// recordError wraps a decode failure with the file and the Seq.
func recordError(path string, seq uint64, err error) error {
	if errors.Is(err, storage.ErrNewerFormat) {
		return &FileError{Path: path, Kind: storage.ErrNewerFormat, Detail: fmt.Sprintf("record %d", seq), Err: err, Hint: hintNewer}
	}
	return corruptError(path, fmt.Sprintf("record %d", seq), err)
}

// verifyAll runs bbolt's page check and decodes every record against the
// index (checkRecords has matched records, requests and counts).
func verifyAll(tx *bbolt.Tx, path string, counts *backend.Tally) error {
	var errs []error
	for err := range tx.Check() {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return corruptError(path, fmt.Sprintf("bbolt's check found %d problems", len(errs)), errors.Join(errs...))
	}
	ix, err := loadIndex(tx, path, binary.BigEndian.Uint64(tx.Bucket(bucketFormat).Get(keyNextSeq)), counts)
	if err != nil {
		return err
	}
	reqs := newFollower(tx.Bucket(bucketRequests))
	return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
		r, err := readRecord(path, k, v, reqs) // checkRecords saw every key is 8 bytes
		if err != nil {
			return err
		}
		if w, _, _ := ix.get(r.ID); pack(r.Seq, r.State) != w {
			return corruptError(path, fmt.Sprintf("record %d (ID %d, %v) is not in the ID log and state index as it is", r.Seq, r.ID, r.State), nil)
		}
		return nil
	})
}
