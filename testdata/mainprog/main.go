// Command mainprog is main_test.go's program: a main that hands its run to
// breakwater.Main and ends the way its first argument asks.
//
//	code N    returns N
//	exit N    calls os.Exit(N) inside the run
//	panic     panics in the run's own goroutine
//	gopanic   panics in another goroutine
//	fatal     a fatal runtime error (no recover can catch it)
//	wait      says "ready", waits for ctx, prints a report, returns 2
//	hang      says "ready", then ignores ctx (says "cancelled") and never returns
//
// "ready" and the pid of the run's process are written to stdout as
// "ready PID".
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/breakwater-crawl/breakwater"
)

func main() {
	breakwater.Main(run)
}

func run(ctx context.Context) int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "mainprog: which ending?")
		return 64
	}
	n := 0
	if len(os.Args) > 2 {
		n, _ = strconv.Atoi(os.Args[2])
	}
	switch os.Args[1] {
	case "code":
		return n
	case "exit":
		os.Exit(n)
	case "panic":
		panic("mainprog: a panic in the run, on purpose")
	case "gopanic":
		go func() { panic("mainprog: a panic in another goroutine, on purpose") }()
		select {}
	case "fatal":
		var mu sync.Mutex
		mu.Unlock() // fatal error: sync: unlock of unlocked mutex
	case "wait":
		fmt.Printf("ready %d\n", os.Getpid())
		<-ctx.Done()
		cause := context.Cause(ctx)
		fmt.Printf("report: interrupted=%t canceled=%t cause=%v\n",
			errors.Is(cause, breakwater.ErrInterrupted), errors.Is(cause, context.Canceled), cause)
		return 2
	case "hang":
		fmt.Printf("ready %d\n", os.Getpid())
		<-ctx.Done()
		fmt.Println("cancelled")
		select {}
	}
	return 64
}
