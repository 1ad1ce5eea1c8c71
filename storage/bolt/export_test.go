package bolt

// Store is the type Open returns: the tests reach its insides.
type Store = store

// Stats is the store's write activity: the tests watch the commits.
type Stats struct {
	Buffered  int    // records and metadata entries Put but not yet committed
	Commits   uint64 // transactions committed since Open
	Committed uint64 // records and metadata entries written by them
}

// Stats returns the store's write activity so far.
func (s *store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Stats{Buffered: len(s.buf) + len(s.metaBuf) + len(s.com) + len(s.metaCom), Commits: s.commits, Committed: s.wrote}
}
