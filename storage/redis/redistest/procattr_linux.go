package redistest

import "syscall"

// procAttr asks the kernel to kill redis-server if the test binary dies
// without running Main's cleanup (a panic, a timeout, a kill).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
