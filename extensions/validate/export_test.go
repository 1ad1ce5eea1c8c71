package validate

// Live returns the number of requests whose scoring state the validator
// still holds; tests use it to prove the table does not leak.
func (v *Validator) Live() int {
	n := 0
	for i := range v.pages.shards {
		sh := &v.pages.shards[i]
		sh.mu.Lock()
		sh.sweepLocked()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// Held returns the number of entries in the request table, dead ones
// included (Live sweeps those first): what the table costs while nothing
// calls it.
func (v *Validator) Held() int {
	n := 0
	for i := range v.pages.shards {
		sh := &v.pages.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// DiagnosisRecords returns how many domains the diagnosis keeps whole
// (evidence under way, or diagnosed) and how many as a compact record.
func (v *Validator) DiagnosisRecords() (whole, compact int) {
	for i := range v.diag.shards {
		sh := &v.diag.shards[i]
		sh.mu.Lock()
		whole, compact = whole+len(sh.whole), compact+len(sh.compact)
		sh.mu.Unlock()
	}
	return whole, compact
}
