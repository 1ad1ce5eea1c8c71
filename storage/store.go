package storage

// Store keeps the Records of a crawl and its run metadata. Implementations
// are safe for concurrent use.
type Store interface {
	// Put inserts or replaces records by ID. The store assigns Seq on a
	// record's first Put and keeps it on later ones; it sets Updated when
	// the caller left it zero. Put validates every record first and stores
	// none if one is invalid (ErrInvalid). It may buffer: a Put is durable
	// once Flush returns nil (backends say when else). Get, Scan and Counts
	// see a Put as soon as it returns. If the same ID appears twice in one
	// call, the later wins.
	Put(recs ...Record) error

	// Get returns the record with the given ID, and whether there is one.
	Get(id uint64) (Record, bool, error)

	// Scan calls fn for each record whose State is one of states (all
	// records when states is empty), in ascending Seq order. If fn returns
	// an error, Scan stops and returns that error unchanged.
	//
	// Scan is not a snapshot and holds no lock while fn runs, so fn may
	// call any method of the store, Put and Flush included. Each record is
	// passed at most once, with the state it has when the scan reaches its
	// Seq: a record fn moves out of states is not seen again; one moved
	// into states ahead of the scan is.
	Scan(fn func(Record) error, states ...State) error

	// Counts returns how many records are in each state. States with no
	// records are absent from the map.
	Counts() (map[State]int, error)

	// SetMeta stores value under key (run metadata, breaker states,
	// cookies). It is buffered and made durable like Put.
	SetMeta(key string, value []byte) error

	// Meta returns the value stored under key, and whether there is one.
	Meta(key string) ([]byte, bool, error)

	// Flush makes everything Put or SetMeta before it durable, and returns
	// nil only when it is.
	Flush() error

	// Close flushes, then releases the store (a file lock, a connection).
	// It returns the flush error, if any. Calling it again returns nil;
	// every other method returns ErrClosed after it.
	Close() error
}
