package testserver

import (
	"context"
	"net"
)

// connKey is the context key of a request's connInfo.
type connKey struct{}

// connInfo numbers a store's connections and the requests each carried, so
// that the request log can tell a client's new request from the same request
// re-sent on a fresh connection by its HTTP transport.
type connInfo struct {
	id     int // 1 for the store's first connection
	served int // requests received on it so far; the Store's mutex guards it
}

// connContext is the server's ConnContext: it gives each accepted connection
// its number.
func (s *Store) connContext(ctx context.Context, _ net.Conn) context.Context {
	s.mu.Lock()
	s.conns++
	c := &connInfo{id: s.conns}
	s.mu.Unlock()
	return context.WithValue(ctx, connKey{}, c)
}
