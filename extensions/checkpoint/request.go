package checkpoint

import (
	"errors"
	"fmt"
	"io"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
	"github.com/gocolly/colly/v2"
)

// errBodyNotReplayable reports a body that cannot be both sent and kept.
var errBodyNotReplayable = errors.New("checkpoint: the request body is not an io.ReadSeeker; it cannot be kept for a resume")

// readBody returns the body's bytes, leaving the reader at its start.
func readBody(r *colly.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	s, ok := r.Body.(io.ReadSeeker)
	if !ok {
		return nil, errBodyNotReplayable
	}
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(s)
	if _, serr := s.Seek(0, io.SeekStart); err == nil {
		err = serr
	}
	if len(b) == 0 {
		b = nil
	}
	return b, err
}

// parseRequest is collyx.ParseRequest, its errors the checkpoint's.
func parseRequest(b []byte) (u string, id uint64, err error) {
	if u, id, err = collyx.ParseRequest(b); err != nil {
		return "", 0, fmt.Errorf("checkpoint: %w", err)
	}
	return u, id, nil
}
