package checkpoint

import (
	"net/url"

	"github.com/gocolly/colly/v2/queue"
	collystorage "github.com/gocolly/colly/v2/storage"
)

// collyStorage is the checkpoint as Colly sees it: the collector's
// storage.Storage (the visited set and the cookies; Register sets it) and
// the storage of a Colly queue (QueueStorage). It keeps those methods off
// the Checkpoint's own API.
type collyStorage struct{ cp *Checkpoint }

var (
	_ collystorage.Storage = collyStorage{}
	_ queue.Storage        = collyStorage{}
)

// Init is called by SetStorage and queue.New, any number of times; it
// returns the store's error, if any.
func (s collyStorage) Init() error { return s.cp.storeErr() }

func (s collyStorage) Visited(id uint64) error { return s.cp.visited(id) }

func (s collyStorage) IsVisited(id uint64) (bool, error) { return s.cp.isVisited(id) }

func (s collyStorage) Cookies(u *url.URL) string { return s.cp.hostCookies(u) }

func (s collyStorage) SetCookies(u *url.URL, cookies string) { s.cp.setHostCookies(u, cookies) }

func (s collyStorage) AddRequest(b []byte) error { return s.cp.addRequest(b) }

func (s collyStorage) GetRequest() ([]byte, error) { return s.cp.getRequest() }

func (s collyStorage) QueueSize() (int, error) { return s.cp.queueSize() }

// QueueStorage returns the checkpoint as the storage of a Colly queue, for
// a crawl written for Colly's queue or a frontier too large for a
// goroutine per URL:
//
//	q, err := queue.New(threads, cp.QueueStorage())
//
// The queue then hands out the URLs earlier runs left unfinished (as
// Resume would, in the order they were first seen) before the requests
// added in this run; a request added whose URL the checkpoint already
// knows (done, queued, or requested in this run) is not queued again.
// Register the checkpoint on the collector the queue runs.
func (cp *Checkpoint) QueueStorage() queue.Storage { return collyStorage{cp} }
