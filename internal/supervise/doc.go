// Package supervise runs this very program again as a child process and
// tells the parent, its supervisor, how the child ended: with the code the
// child said it would exit with, or some other way (a crash: Go's runtime
// exits 2 on a panic, a fatal error and SIGQUIT). breakwater.Main and
// examples/productcrawl build their policies (which signals to forward,
// what a crash prints) on it. Unix only: elsewhere the package is empty.
package supervise
