package checkpoint

import "github.com/breakwater-crawl/breakwater/storage"

// Store returns the store under the checkpoint: the tests read the
// records it wrote. A program has the store it passed to New.
func (cp *Checkpoint) Store() storage.Store { return cp.store }
