//go:build !linux

package redistest

import "syscall"

// procAttr has nothing to add outside Linux: without Main's cleanup a
// redis-server started for the tests outlives a crashed test binary.
func procAttr() *syscall.SysProcAttr { return nil }
