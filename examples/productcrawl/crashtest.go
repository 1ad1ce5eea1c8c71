package main

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// testCrashEnv is for productcrawl's own tests, never for production: set
// to one of the crashes below, it makes the crawl crash on purpose, so the
// tests can prove that a crash of any kind ends the run as an error
// (exit 1) with a line saying it crashed. Unset (always, outside the
// tests) it does nothing.
//
//	panic            a panic in the main goroutine, as the crawl starts
//	goroutine-panic  a panic in one of Colly's goroutines, at the first page
//	fatal            a fatal runtime error (cannot be recovered), at the first page
//	quit             SIGQUIT sent to the crawl's own process, at the first page
const testCrashEnv = "BREAKWATER_TEST_CRASH"

var (
	testCrash     = os.Getenv(testCrashEnv)
	testCrashOnce sync.Once
)

// testSlowStartEnv is for productcrawl's own tests, never for production:
// set to a duration, main waits that long before anything else, as a
// process started on a loaded machine may, so that a test can send a
// signal before main has begun.
const testSlowStartEnv = "BREAKWATER_TEST_SLOW_START"

// testStartedEnv is for productcrawl's own tests, never for production:
// set to a path, slowStart creates that file as its wait begins, so that
// a test knows main has been reached, however slowly the machine started
// the process, before it sends its signal.
const testStartedEnv = "BREAKWATER_TEST_STARTED_FILE"

// slowStart is main's first step: the wait testSlowStartEnv asks for.
func slowStart() {
	if d, err := time.ParseDuration(os.Getenv(testSlowStartEnv)); err == nil {
		if f := os.Getenv(testStartedEnv); f != "" {
			_ = os.WriteFile(f, nil, 0o600)
		}
		time.Sleep(d)
	}
}

// crashAtStart is the main goroutine's crash point.
func crashAtStart() {
	if testCrash == "panic" {
		panic(testCrashEnv + "=panic: a panic in the main goroutine, on purpose")
	}
}

// crashAtPage is the crash point of Colly's goroutines: the first page.
func crashAtPage() {
	switch testCrash {
	case "goroutine-panic", "fatal", "quit":
	default:
		return
	}
	testCrashOnce.Do(func() {
		switch testCrash {
		case "goroutine-panic":
			panic(testCrashEnv + "=goroutine-panic: a panic in a crawl goroutine, on purpose")
		case "fatal":
			var mu sync.Mutex
			mu.Unlock() // fatal error: sync: unlock of unlocked mutex
		case "quit":
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Signal(syscall.SIGQUIT)
			}
		}
	})
}
