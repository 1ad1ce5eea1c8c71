//go:build !linux

package redis_test

import "syscall"

// dieWithTest: only Linux kills a child with its parent (Pdeathsig);
// elsewhere the test's Cleanup stops the server.
func dieWithTest() *syscall.SysProcAttr { return nil }
