package breaker

// Store makes the circuit of each domain. The default keeps circuits in
// this process; storage/redis shares them between every worker of a crawl,
// so a trip seen by one is seen by all.
type Store interface {
	// Circuit returns the circuit for domain, configured by p (already
	// validated). It is called once per domain per Breaker.
	Circuit(domain string, p Profile) (Circuit, error)
}

// MemoryStore keeps every circuit in this process. It is the default.
type MemoryStore struct{}

// Circuit returns a new in-process circuit.
func (MemoryStore) Circuit(domain string, p Profile) (Circuit, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return newMemCircuit(domain, p), nil
}
