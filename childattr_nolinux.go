//go:build unix && !linux

package breakwater

import (
	"os"
	"syscall"
)

// childAttr: this system has no parent-death signal; a supervisor killed
// with SIGKILL leaves its child to finish on its own.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

const childLockThread = false

func selfExe() (string, error) { return os.Executable() }
