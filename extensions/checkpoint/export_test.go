package checkpoint

import "github.com/breakwater-crawl/breakwater/storage"

// Store returns the store under the checkpoint: the tests read the
// records it wrote. A program has the store it passed to New.
func (cp *Checkpoint) Store() storage.Store { return cp.store }

// Runs returns every run recorded in the checkpoint, oldest first, this
// one last once it has started.
func (cp *Checkpoint) Runs() []runRecord {
	cp.mu.Lock()
	defer cp.unlock()
	return append([]runRecord(nil), cp.runs...)
}
