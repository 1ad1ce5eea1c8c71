//go:build !unix

package main

import "os"

// supervisedChild: outside Unix there is no supervisor.
func supervisedChild() (func(int), bool) { return nil, false }

// superviseCrawl runs the crawl in this process: there is no supervisor
// outside Unix, and a crash exits as Go's runtime decides (2 for a panic).
func superviseCrawl(args []string, stderr *os.File) int {
	return run(args, os.Stdout, stderr)
}
