package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/url"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// collyRedisStorage is the durable scenario's anchor: Colly's storage and
// its queue's storage on Redis, as a Colly user who wants a resumable
// crawl has them today from gocolly/redisstorage. It is written here, not
// imported, so that it runs on the go-redis the rest of the repository
// uses (redisstorage is on the old github.com/go-redis/redis v6), but it
// sends, per call, the commands redisstorage sends (read at its master,
// 1745c5e):
//
//	Init        PING
//	Visited     SET <prefix>:request:<id> "1"   (no expiry: Expires 0)
//	IsVisited   GET <prefix>:request:<id>
//	SetCookies  SET <prefix>:cookie:<host> <cookies>   (under a write lock)
//	Cookies     GET <prefix>:cookie:<host>             (under a read lock)
//	AddRequest  RPUSH <prefix>:queue <request>
//	GetRequest  LPOP <prefix>:queue
//	QueueSize   LLEN <prefix>:queue
//
// Its keys are built with the same fmt.Sprintf calls. The connection speaks
// RESP2 without CLIENT SETINFO, as go-redis v6 did.
type collyRedisStorage struct {
	client *goredis.Client
	prefix string
	mu     sync.RWMutex // only for the cookie methods, as in redisstorage
}

func newCollyRedisStorage(client *goredis.Client, prefix string) *collyRedisStorage {
	return &collyRedisStorage{client: client, prefix: prefix}
}

// Init implements colly's storage.Storage and queue.Storage.
func (s *collyRedisStorage) Init() error {
	if err := s.client.Ping(context.Background()).Err(); err != nil {
		return fmt.Errorf("Redis connection error: %w", err)
	}
	return nil
}

// Visited implements storage.Storage.
func (s *collyRedisStorage) Visited(requestID uint64) error {
	return s.client.Set(context.Background(), s.getIDStr(requestID), "1", 0).Err()
}

// IsVisited implements storage.Storage.
func (s *collyRedisStorage) IsVisited(requestID uint64) (bool, error) {
	_, err := s.client.Get(context.Background(), s.getIDStr(requestID)).Result()
	if errors.Is(err, goredis.Nil) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

// SetCookies implements storage.Storage.
func (s *collyRedisStorage) SetCookies(u *url.URL, cookies string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.client.Set(context.Background(), s.getCookieID(u.Host), cookies, 0).Err(); err != nil {
		log.Printf("SetCookies() .Set error %s", err) // as redisstorage does: the interface returns no error
	}
}

// Cookies implements storage.Storage.
func (s *collyRedisStorage) Cookies(u *url.URL) string {
	s.mu.RLock()
	cookies, err := s.client.Get(context.Background(), s.getCookieID(u.Host)).Result()
	s.mu.RUnlock()
	if errors.Is(err, goredis.Nil) {
		return ""
	} else if err != nil {
		log.Printf("Cookies() .Get error %s", err)
		return ""
	}
	return cookies
}

// AddRequest implements queue.Storage.
func (s *collyRedisStorage) AddRequest(r []byte) error {
	return s.client.RPush(context.Background(), s.getQueueID(), r).Err()
}

// GetRequest implements queue.Storage.
func (s *collyRedisStorage) GetRequest() ([]byte, error) {
	return s.client.LPop(context.Background(), s.getQueueID()).Bytes()
}

// QueueSize implements queue.Storage.
func (s *collyRedisStorage) QueueSize() (int, error) {
	n, err := s.client.LLen(context.Background(), s.getQueueID()).Result()
	return int(n), err
}

func (s *collyRedisStorage) getIDStr(id uint64) string {
	return fmt.Sprintf("%s:request:%d", s.prefix, id)
}

func (s *collyRedisStorage) getCookieID(c string) string {
	return fmt.Sprintf("%s:cookie:%s", s.prefix, c)
}

func (s *collyRedisStorage) getQueueID() string {
	return fmt.Sprintf("%s:queue", s.prefix)
}

// clear deletes every key under the prefix (SCAN and UNLINK, never KEYS
// or FLUSHDB: the server may be shared). Not part of the measured crawl.
func (s *collyRedisStorage) clear(ctx context.Context) error {
	iter := s.client.Scan(ctx, 0, s.prefix+":*", 1000).Iterator()
	batch := make([]string, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.client.Unlink(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return fmt.Errorf("clear %s: %w", s.prefix, err)
			}
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("clear %s: %w", s.prefix, err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("clear %s: %w", s.prefix, err)
	}
	return nil
}
