//go:build !unix

package breakwater

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
)

var interrupts = []os.Signal{os.Interrupt, syscall.SIGTERM}

// supervised: outside Unix there is no supervisor.
func supervised() (func(int), bool) { return nil, false }

// superviseRun runs run in this process: a panic in its own goroutine exits
// 1; a crash anywhere else exits as Go's runtime decides (2).
func superviseRun(run func(context.Context) int) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "panic: %v\n\n%s\nbreakwater: the run crashed; exiting 1 (an error), not Go's 2 (tripped)\n", r, debug.Stack())
			code = 1
		}
	}()
	return runInterruptible(run)
}
