package checkpoint

import (
	"errors"
	"fmt"

	"github.com/breakwater-crawl/breakwater/internal/collyx"
)

// errBodyNotReplayable reports a body that cannot be both sent and kept.
var errBodyNotReplayable = errors.New("checkpoint: the request body is not an io.ReadSeeker; it cannot be kept for a resume")

// parseRequest is collyx.ParseRequest, its errors the checkpoint's.
func parseRequest(b []byte) (u string, id uint64, err error) {
	if u, id, err = collyx.ParseRequest(b); err != nil {
		return "", 0, fmt.Errorf("checkpoint: %w", err)
	}
	return u, id, nil
}
