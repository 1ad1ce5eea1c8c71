package bolt

import (
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
	for i, r := range codecSamples() {
		v := encode(nil, &r)
		if len(v) > maxEncodedLen(&r) {
			t.Errorf("sample %d: %d bytes, over the bound %d", i, len(v), maxEncodedLen(&r))
		}
		got, err := decode(v, 77)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		r.Seq = 77
		if !reflect.DeepEqual(got, r) {
			t.Errorf("sample %d:\n got %#v\nwant %#v", i, got, r)
		}
	}
}

func TestCodecCatchesEveryFlippedBit(t *testing.T) {
	r := codecSamples()[1]
	v := encode(nil, &r)
	for i := range v {
		for bit := range 8 {
			w := append([]byte{}, v...)
			w[i] ^= 1 << bit
			if _, err := decode(w, 1); err == nil {
				t.Fatalf("flipping bit %d of byte %d went unnoticed", bit, i)
			}
		}
	}
	for n := range v {
		if _, err := decode(v[:n], 1); err == nil {
			t.Fatalf("a record cut to %d of %d bytes decoded", n, len(v))
		}
	}
}

func TestCodecNewerRecordVersion(t *testing.T) {
	v := encode(nil, &storage.Record{ID: 1, State: storage.Done})
	v[0] = recordVersion + 1
	if _, err := decode(v, 1); !errors.Is(err, storage.ErrNewerFormat) {
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
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v []byte) {
		r, err := decode(v, 5)
		if err != nil {
			if !errors.Is(err, errBadRecord) && !errors.Is(err, storage.ErrNewerFormat) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if w := encode(nil, &r); string(w) != string(v) {
			t.Fatalf("accepted a non-canonical encoding: %x re-encodes to %x (%s)", v, w, fmt.Sprint(r))
		}
	})
}
