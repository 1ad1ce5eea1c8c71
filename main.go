package breakwater

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// ErrInterrupted is the cause of Main's context when SIGINT or SIGTERM
// cancelled it.
var ErrInterrupted = errors.New("breakwater: interrupted")

// Main runs run and exits with its code.
func Main(run func(ctx context.Context) int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			cancel(fmt.Errorf("%w by %v", ErrInterrupted, s))
		}
	}()
	os.Exit(run(ctx))
}
