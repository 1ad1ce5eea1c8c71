package main

import bw "github.com/breakwater-crawl/breakwater"

// openCheckpoint opens the embedded checkpoint at path for the Breakwater
// client of the overhead scenario.
//
// TODO(checkpoint): extensions/checkpoint has not landed yet. When it has:
//
//	cp, err := checkpoint.Open(path)
//	if err != nil { return nil, fmt.Errorf("checkpoint: %w", err) }
//	return cp, nil
//
// and close it after the crawl (crawl.go). Until then the overhead row of
// Breakwater runs the breaker and validation only, and says so.
func openCheckpoint(path string) (bw.Extension, error) {
	_ = path
	return nil, nil
}

// checkpointLanded reports whether openCheckpoint opens a real checkpoint.
const checkpointLanded = false
