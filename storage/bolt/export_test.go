package bolt

// Stats is the store's write activity: the tests watch the commits.
type Stats = writeStats

// Stats returns the store's write activity so far.
func (s *Store) Stats() Stats { return s.writeActivity() }
