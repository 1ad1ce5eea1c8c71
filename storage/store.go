package storage

// Store keeps the Records of a crawl and its run metadata. Implementations
// are safe for concurrent use.
type Store interface {
	// Put inserts or replaces records by ID (of one ID twice, the later
	// wins); the store sets Seq and a zero Updated (see Record). If one is
	// invalid it stores none (ErrInvalid). Reads see a Put once it returns;
	// it is durable once Flush returns nil (backends say when else).
	Put(recs ...Record) error

	// Get returns the record with the given ID, and whether there is one.
	Get(id uint64) (Record, bool, error)

	// Scan calls fn for each record in one of states (all when none), in
	// ascending Seq order, and returns fn's first error unchanged. It is
	// not a snapshot and holds no lock while fn runs (fn may call the
	// store): each record comes at most once, in its state when the scan
	// reaches its Seq.
	Scan(fn func(Record) error, states ...State) error

	// Counts returns how many records are in each state (none: absent).
	Counts() (map[State]int, error)

	// SetMeta stores value under key (run metadata); durable like Put.
	SetMeta(key string, value []byte) error

	// Meta returns the value stored under key, and whether there is one.
	Meta(key string) ([]byte, bool, error)

	// Flush makes everything Put or SetMeta before it durable, and returns
	// nil only when it is.
	Flush() error

	// Close flushes (returning its error) and releases the store; again,
	// it returns nil, and every other method ErrClosed.
	Close() error
}
