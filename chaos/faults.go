package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"go.etcd.io/bbolt"
)

// FaultKind is what goes wrong during a case.
type FaultKind int

const (
	fNone         FaultKind = iota
	fCancel                 // the crawl's context is cancelled At into the run
	fDeadline               // the crawl's context has a deadline At into the run
	fKill                   // SIGKILL At into the run (in-process: stopped), then a resume to the end
	fCorrupt                // a finished run's checkpoint is corrupted, then a resume must refuse it untouched
	fQuit                   // productcrawl: SIGQUIT At into the run (a crash), then a resume
	fRedisRestart           // Redis mode: Redis killed At into the run and started again empty
	fDiskFull               // productcrawl: its files may not grow past Limit bytes (a full disk), then a resume with room
)

// Corruption is how fCorrupt damages the checkpoint file.
type Corruption int

const (
	corruptRecord   Corruption = iota // one byte of a live record's URL flipped: its CRC no longer matches
	corruptTruncate                   // cut to half its size
	corruptForeign                    // replaced by a file that is not a checkpoint
)

func (c Corruption) String() string { return [...]string{"record", "truncate", "foreign"}[c] }

// Fault is the fault of a case.
type Fault struct {
	Kind       FaultKind
	At         time.Duration
	Corruption Corruption
	Persist    bool  // fRedisRestart: Redis keeps an AOF, so the restart loses nothing
	Late       bool  // fRedisRestart without Persist: the last worker starts once Redis is back
	Limit      int64 // fDiskFull: the largest file productcrawl may write, in bytes
}

func (f Fault) String() string {
	switch f.Kind {
	case fCancel:
		return "cancel@" + f.At.String()
	case fDeadline:
		return "deadline@" + f.At.String()
	case fKill:
		return "kill@" + f.At.String() + "+resume"
	case fCorrupt:
		return "corrupt-" + f.Corruption.String() + "+resume"
	case fQuit:
		return "sigquit@" + f.At.String() + "+resume"
	case fDiskFull:
		return "diskfull@" + strconv.FormatInt(f.Limit>>10, 10) + "KB+resume"
	case fRedisRestart:
		if f.Persist {
			return "redis-restart-aof@" + f.At.String()
		}
		if f.Late {
			return "redis-restart@" + f.At.String() + "+late-worker"
		}
		return "redis-restart@" + f.At.String()
	}
	return "none"
}

// cutShort reports whether the fault may end the crawl before its work is
// done (so a healthy store may be left unfinished).
func (f Fault) cutShort() bool {
	return f.Kind == fCancel || f.Kind == fDeadline || (f.Kind == fRedisRestart && !f.Persist)
}

func drawFault(d draw, w Wiring) Fault {
	f := Fault{At: d.ms(50, 1500)}
	resumable := w.Process || w.Checkpoint == cpBolt
	switch d.pick(55, 9, 9, 17, 10) {
	case 1:
		if !w.Process {
			f.Kind = fCancel
		}
	case 2:
		if !w.Process {
			f.Kind = fDeadline
		}
	case 3:
		switch {
		case w.Process && d.chance(0.3):
			f.Kind = fQuit
		case w.Process && w.Workers == 0 && d.chance(0.3):
			// The checkpoint starts at 32 KB (bbolt's first mmap); the
			// output grows by a line per product.
			f.Kind, f.Limit = fDiskFull, int64(d.intn(40, 400))<<10
		case resumable:
			f.Kind = fKill
		}
	case 4:
		if resumable {
			f.Kind = fCorrupt
			f.Corruption = Corruption(d.pick(5, 2, 3))
		}
	}
	return f
}

// corrupt damages the checkpoint at path as c says, with r choosing where.
// It reports false when the file offers nothing to damage that way (no
// live record found); the case then does not count the check.
func corrupt(path string, c Corruption, r *rand.Rand) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read checkpoint to corrupt: %w", err)
	}
	switch c {
	case corruptForeign:
		if r.IntN(2) == 0 {
			b = []byte("{\"products\": [\"this is not a checkpoint\"]}\n")
		} else {
			b = make([]byte, 64<<10)
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
		}
	case corruptRecord, corruptTruncate:
		start, end := liveRecord(path, b, r)
		if start < 0 {
			return false, nil
		}
		if c == corruptTruncate {
			b = b[:start] // cut inside a page the tree still uses
		} else {
			b[end-1] ^= 0x5a // the URL's last byte: the record's CRC no longer matches
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return false, fmt.Errorf("write corrupted checkpoint: %w", err)
	}
	return true, nil
}

func fileHash(path string) [32]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return [32]byte{}
	}
	return sha256.Sum256(b)
}

// liveRecord finds, in b (the file at path), the URL of a record that
// bbolt still reaches, and returns where it starts and ends (-1 if none).
// A record holds its URL after its length byte; the request bucket holds it
// again, inside JSON. bbolt copies a page on every write, so a record
// updated a few times leaves stale copies of its bytes on freed pages: each
// occurrence is tried by flipping the URL's last byte in a copy of the file
// and asking bbolt whether a value it still reaches now holds the flipped
// bytes (a flip on a freed page is no corruption at all).
func liveRecord(path string, b []byte, r *rand.Rand) (int, int) {
	type span struct{ start, end int }
	var cands []span
	prefix := []byte("http://127.0.0.1:")
	for i := 1; i < len(b); {
		j := bytes.Index(b[i:], prefix)
		if j < 0 {
			break
		}
		at := i + j
		i = at + 1
		n := int(b[at-1])
		if b[at-1] == '"' || n < len(prefix)+2 || at+n > len(b) {
			continue // inside JSON, or no length byte before it
		}
		u := b[at : at+n]
		if bytes.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '"' }) {
			continue
		}
		cands = append(cands, span{at, at + n})
	}
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	for _, c := range cands[:min(len(cands), 32)] {
		flipped := bytes.Clone(b)
		flipped[c.end-1] ^= 0x5a
		dmg := flipped[c.start-1 : c.end]
		if bytes.Contains(b, dmg) {
			continue // the flipped bytes are another URL: no telling which is which
		}
		if live(path, flipped, dmg) {
			return c.start, c.end
		}
	}
	return -1, -1
}

// live reports whether the bytes dmg sit in a value bbolt still reaches in
// the file b (path names it in messages only). It reads the file with bbolt
// itself, not with Breakwater's code under test.
func live(path string, b, dmg []byte) bool {
	cp := path + ".live"
	defer os.Remove(cp)
	if os.WriteFile(cp, b, 0o644) != nil {
		return false
	}
	db, err := bbolt.Open(cp, 0o644, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return false
	}
	defer db.Close()
	found := false
	var walk func(bk *bbolt.Bucket)
	walk = func(bk *bbolt.Bucket) {
		_ = bk.ForEach(func(k, v []byte) error {
			if v == nil {
				if sub := bk.Bucket(k); sub != nil {
					walk(sub)
				}
			} else if bytes.Contains(v, dmg) {
				found = true
			}
			return nil
		})
	}
	_ = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(_ []byte, bk *bbolt.Bucket) error {
			walk(bk)
			return nil
		})
	})
	return found
}
