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

type namedQueue struct {
	name  string
	depth func(ctx context.Context) (QueueDepth, error)
}

type namedCheckpoint struct {
	name   string
	counts func() (map[storage.State]int, error)
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
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range m.queues {
		if w.name == name {
			return fmt.Errorf("%w: queue %q", ErrAlreadyWatched, name)
		}
	}
	m.queues = append(m.queues, namedQueue{name, depth})
	return nil
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
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range m.checkpoints {
		if w.name == name {
			return fmt.Errorf("%w: checkpoint %q", ErrAlreadyWatched, name)
		}
	}
	m.checkpoints = append(m.checkpoints, namedCheckpoint{name, counts})
	return nil
}
