package metrics

import (
	"context"
	"errors"
	"fmt"

	"github.com/breakwater-crawl/breakwater/storage"
)

// QueueDepth is how many jobs a queue holds, by where they are.
type QueueDepth struct {
	Ready    int64 // claimable now
	Delayed  int64 // waiting for a backoff, a delayed start or a parked domain
	InFlight int64 // claimed by a worker, not yet acked
	Dead     int64 // dead letters: given up on
}

type (
	namedQueue      = named[func(ctx context.Context) (QueueDepth, error)]
	namedCheckpoint = named[func() (map[storage.State]int, error)]
)

// named is a watched source and the label value it is exported under.
type named[F any] struct {
	name string
	read F
}

// watch adds w to *list unless its name is there already.
func watch[F any](m *Metrics, list *[]named[F], kind string, w named[F]) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range *list {
		if x.name == w.name {
			return fmt.Errorf("%w: %s %q", ErrAlreadyWatched, kind, w.name)
		}
	}
	*list = append(*list, w)
	return nil
}

// WatchQueue makes every scrape call depth for a job queue's depth,
// exported under the label queue=name. depth is called with a deadline
// (see Config.ReadTimeout); a backend plugs in without this package
// importing it:
//
//	m.WatchQueue("redis", func(ctx context.Context) (metrics.QueueDepth, error) {
//		s, err := cs.Stats(ctx) // cs is a *redis.CollyStorage
//		return metrics.QueueDepth{Ready: s.Ready, Delayed: s.Delayed, InFlight: s.InFlight, Dead: s.Dead}, err
//	})
//
// A name already watched returns ErrAlreadyWatched.
func (m *Metrics) WatchQueue(name string, depth func(ctx context.Context) (QueueDepth, error)) error {
	if name == "" || depth == nil {
		return errors.New("metrics: WatchQueue needs a name for the queue label and a depth function")
	}
	return watch(m, &m.queues, "queue", namedQueue{name, depth})
}

// WatchCheckpoint makes every scrape call counts for a checkpoint's URLs
// by state, exported under the label checkpoint=name: the Counts method
// of a *checkpoint.Checkpoint or of any storage.Store (the embedded file,
// memory, Redis).
//
//	m.WatchCheckpoint("crawl.db", cp.Counts)
//
// A name already watched returns ErrAlreadyWatched.
func (m *Metrics) WatchCheckpoint(name string, counts func() (map[storage.State]int, error)) error {
	if name == "" || counts == nil {
		return errors.New("metrics: WatchCheckpoint needs a name for the checkpoint label and a counts function (a store's Counts)")
	}
	return watch(m, &m.checkpoints, "checkpoint", namedCheckpoint{name, counts})
}
