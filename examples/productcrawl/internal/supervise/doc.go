// Package supervise runs this very program again as a child process and
// tells the parent, its supervisor, how the child ended: with the code the
// child said it would exit with, or some other way (a crash: Go's runtime
// exits 2 on a panic, a fatal error and SIGQUIT). productcrawl builds its
// policy (which signals to forward, what a crash logs) on it; the root
// package's breakwater.Main runs its own copy, under a policy of its own,
// and a program that needs no policy of its own calls that. Unix only:
// elsewhere the package is empty.
package supervise
