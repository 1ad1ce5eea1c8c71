// Package observed is what Breakwater's own observers share.
package observed

import (
	"slices"
	"sync"

	"github.com/breakwater-crawl/breakwater/observe"
)

// Set is the subjects an observer follows. The zero Set is empty.
type Set struct {
	mu sync.Mutex
	s  []observe.Subject
}

// Add reports whether s is new to the set, and adds it.
func (x *Set) Add(s observe.Subject) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if slices.Contains(x.s, s) {
		return false
	}
	x.s = append(x.s, s)
	return true
}
