package checkpoint

import (
	"github.com/gocolly/colly/v2/queue"
	collystorage "github.com/gocolly/colly/v2/storage"
)

// collyStorage is the checkpoint as Colly's storage.Storage and
// queue.Storage, keeping those methods off the Checkpoint's own API.
type collyStorage struct{ cp *Checkpoint }

var (
	_ collystorage.Storage = collyStorage{}
	_ queue.Storage        = collyStorage{}
)

// Init returns the store's error, if any.
func (s collyStorage) Init() error { return s.cp.storeErr() }

// QueueStorage returns the checkpoint as a Colly queue's storage, for a
// frontier too large for a goroutine per URL:
//
//	q, err := queue.New(threads, cp.QueueStorage())
//
// The queue hands out what earlier runs left unfinished (as Resume would)
// before the requests added in this run; a request whose URL the
// checkpoint knows is not queued again. Register the checkpoint on the
// collector the queue runs.
func (cp *Checkpoint) QueueStorage() queue.Storage { return collyStorage{cp} }
