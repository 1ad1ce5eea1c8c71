//go:build unix

package earlysig

import (
	"os"
	"os/signal"
	"syscall"
)

func init() {
	if os.Getenv(ChildEnv) != "" {
		return
	}
	signal.Notify(Quit, syscall.SIGQUIT)
}
