//go:build !unix

package main

import "os"

// supervise runs the crawl in this process: there is no supervisor
// outside Unix, and a crash exits as Go's runtime decides (2 for a panic).
func supervise(args []string, stderr *os.File) int {
	return run(args, os.Stdout, stderr)
}
