package backend_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage"
	"github.com/breakwater-crawl/breakwater/storage/internal/backend"
)

func TestInvalidArgumentsAreErrInvalid(t *testing.T) {
	for _, bad := range []storage.State{0, storage.Dead + 1, 255} {
		r := storage.Record{State: bad}
		if err := r.Validate(); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Record.Validate with State(%d): %v, want ErrInvalid", uint8(bad), err)
		}
		if _, err := backend.Wanted([]storage.State{storage.Done, bad}); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Wanted with State(%d): %v, want ErrInvalid", uint8(bad), err)
		}
	}
	if err := (&storage.Record{State: storage.Done, Attempts: -1}).Validate(); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("Record.Validate with negative Attempts: %v, want ErrInvalid", err)
	}
	for _, key := range []string{"", strings.Repeat("k", storage.MaxMetaKeyLen+1)} {
		if err := storage.ValidateMetaKey(key); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("ValidateMetaKey(%d bytes): %v, want ErrInvalid", len(key), err)
		}
	}
	good := storage.Record{State: storage.Pending}
	if err := good.Validate(); err != nil {
		t.Errorf("Record.Validate(pending): %v", err)
	}
	for _, states := range [][]storage.State{nil, storage.States()} {
		if want, err := backend.Wanted(states); err != nil || want != (backend.States{false, true, true, true, true, true, true}) {
			t.Errorf("Wanted(%v) = %v, %v; want every state", states, want, err)
		}
	}
	if err := storage.ValidateMetaKey(strings.Repeat("k", storage.MaxMetaKeyLen)); err != nil {
		t.Errorf("ValidateMetaKey(the longest key): %v", err)
	}
}

func TestTallyMapHasTheNonZeroCounts(t *testing.T) {
	var tally backend.Tally
	tally[storage.Done] = 3
	tally[storage.Dead] = 1
	m := tally.Map()
	if len(m) != 2 || m[storage.Done] != 3 || m[storage.Dead] != 1 {
		t.Errorf("Map() = %v, want done 3 and dead 1", m)
	}
}
