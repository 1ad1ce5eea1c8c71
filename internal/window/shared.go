package window

import (
	"sync"
	"sync/atomic"
)

// Shared is a Window under a lock; its failure count reads without taking it.
type Shared[T any] struct {
	mu  sync.Mutex
	win Window[T]
	n   atomic.Int32
}

// NewShared is New for a Shared window.
func NewShared[T any](size int, failure func(T) bool) *Shared[T] {
	return &Shared[T]{win: New(size, failure)}
}

// Failures is how many failures the window holds.
func (s *Shared[T]) Failures() int { return int(s.n.Load()) }

// Add records o as the latest outcome.
func (s *Shared[T]) Add(o T) {
	s.mu.Lock()
	s.win.Add(o)
	s.n.Store(int32(s.win.Failures))
	s.mu.Unlock()
}

// Reset empties the window.
func (s *Shared[T]) Reset() {
	s.mu.Lock()
	s.win.Reset()
	s.n.Store(0)
	s.mu.Unlock()
}
