package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/breakwater-crawl/breakwater/storage"
)

func codecSamples() []storage.Record {
	return []storage.Record{
		{ID: 0, State: storage.Pending},
		{ID: 1<<64 - 1, URL: "http://127.0.0.1/ü", State: storage.Dead, Attempts: 1 << 40, LastError: "x\x00y",
			NotBefore: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
			Updated:   time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), Request: []byte{}},
		{ID: 42, URL: "u", State: storage.Parked, NotBefore: time.Date(-50, 6, 1, 0, 0, 0, 0, time.UTC),
			Updated: time.Unix(0, 0).UTC(), Request: make([]byte, 70000)},
	}
}

func TestCodecRoundTrip(t *testing.T) {
	key := seqKey(77)
	for i, r := range codecSamples() {
		v := encode(nil, &r)
		if len(v) != encodedLen(&r) {
			t.Errorf("sample %d: %d bytes, encodedLen says %d", i, len(v), encodedLen(&r))
		}
		got, hasReq, err := decode(v, 77)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if hasReq != (r.Request != nil) {
			t.Fatalf("sample %d: decode says request %v, the record has %v", i, hasReq, r.Request != nil)
		}
		if hasReq {
			if got.Request, err = decodeRequest(key, encodeRequest(nil, key, r.Request)); err != nil {
				t.Fatalf("sample %d: request: %v", i, err)
			}
		}
		r.Seq = 77
		if !reflect.DeepEqual(got, r) {
			t.Errorf("sample %d:\n got %#v\nwant %#v", i, got, r)
		}
	}
	ids := []uint64{0, 1, 1<<64 - 1, 0x9E3779B97F4A7C15}
	run, err := decodeIDRun(key, encodeIDRun(nil, key, ids))
	if err != nil || len(run) != 8*len(ids) {
		t.Fatalf("ID run: %x, %v", run, err)
	}
	for i, id := range ids {
		if got := binary.BigEndian.Uint64(run[8*i:]); got != id {
			t.Errorf("ID run, ID %d: %x, want %x", i, got, id)
		}
	}
}

// Every value the store writes carries a checksum: no flipped bit and no
// truncation goes unnoticed.
func TestCodecCatchesEveryFlippedBit(t *testing.T) {
	r := codecSamples()[1]
	r.Request = []byte(`{"URL":"http://127.0.0.1/","Method":"GET"}`)
	key := seqKey(1)
	for name, tc := range map[string]struct {
		v   []byte
		dec func([]byte) error
	}{
		"record":  {encode(nil, &r), func(v []byte) error { _, _, err := decode(v, 1); return err }},
		"request": {encodeRequest(nil, key, r.Request), func(v []byte) error { _, err := decodeRequest(key, v); return err }},
		"ID run":  {encodeIDRun(nil, key, []uint64{3, 1 << 60}), func(v []byte) error { _, err := decodeIDRun(key, v); return err }},
	} {
		v := tc.v
		for i := range v {
			for bit := range 8 {
				w := append([]byte{}, v...)
				w[i] ^= 1 << bit
				if err := tc.dec(w); err == nil {
					t.Fatalf("%s: flipping bit %d of byte %d went unnoticed", name, bit, i)
				}
			}
		}
		for n := range v {
			if err := tc.dec(v[:n]); err == nil {
				t.Fatalf("%s: a value cut to %d of %d bytes decoded", name, n, len(v))
			}
		}
	}
	// A request or ID run under another key is caught too.
	if _, err := decodeRequest(seqKey(2), encodeRequest(nil, key, r.Request)); err == nil {
		t.Errorf("a request under the wrong Seq decoded")
	}
	if _, err := decodeIDRun(seqKey(2), encodeIDRun(nil, key, []uint64{3})); err == nil {
		t.Errorf("an ID run under the wrong Seq decoded")
	}
}

func TestCodecNewerRecordVersion(t *testing.T) {
	v := encode(nil, &storage.Record{ID: 1, State: storage.Done})
	v[0] = recordVersion + 1
	if _, _, err := decode(v, 1); !errors.Is(err, storage.ErrNewerFormat) {
		t.Errorf("decode of version %d: %v, want ErrNewerFormat", v[0], err)
	}
	if _, _, err := peek(v); !errors.Is(err, storage.ErrNewerFormat) {
		t.Errorf("peek of version %d: %v, want ErrNewerFormat", v[0], err)
	}
}

// FuzzDecode: whatever the bytes, decode returns a record or an error and
// never panics; what it accepts re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, r := range codecSamples() {
		f.Add(encode(nil, &r))
	}
	f.Add([]byte{2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v []byte) {
		r, hasReq, err := decode(v, 5)
		if err != nil {
			if !errors.Is(err, errBadRecord) && !errors.Is(err, storage.ErrNewerFormat) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if hasReq {
			r.Request = []byte{}
		}
		if w := encode(nil, &r); string(w) != string(v) {
			t.Fatalf("accepted a non-canonical encoding: %x re-encodes to %x (%s)", v, w, fmt.Sprint(r))
		}
	})
}
