package breakwater

import (
	"os"
	"syscall"
)

// childAttr has the child killed when its supervisor dies.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// childLockThread: the parent-death signal is tied to the thread that started
// the child.
const childLockThread = true

// selfExe is this very executable, even if its file was replaced or
// removed since it started; without /proc, the path it was started from.
func selfExe() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}
