// Package earlysig holds a SIGQUIT that reaches productcrawl's supervisor
// before its main has begun. Go's runtime exits 2 on a SIGQUIT nobody
// asked for, and 2 reads as "tripped"; a process started on a loaded
// machine can spend tens of milliseconds before main. This package has no
// dependency beyond the standard library, and its path sorts before the
// crawl's other packages, so its init runs among the first: from then on a
// SIGQUIT waits in Quit, where the supervisor takes it as the crash it is.
// What comes before (the runtime's own start and a few standard packages'
// inits, well under a millisecond) is a window no Go program can close.
package earlysig

import "os"

// Quit receives the SIGQUITs that reach the process before the supervisor
// watches signals itself; it must then Stop it and drain it.
var Quit = make(chan os.Signal, 1)

// ChildEnv marks the crawl's own process, the supervisor's child, which
// keeps Go's SIGQUIT behaviour: a dump of its goroutines, then exit 2,
// which its supervisor reads as a crash.
const ChildEnv = "BREAKWATER_PRODUCTCRAWL_CHILD"
