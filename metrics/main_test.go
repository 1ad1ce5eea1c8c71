package metrics_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

// TestMain stops the Redis server redistest may have started.
func TestMain(m *testing.M) { redistest.Main(m) }
