//go:build linux

package main

import (
	"os"
	"syscall"
)

// childAttr puts the crawl's child in a process group of its own (a
// terminal's Ctrl-C reaches the supervisor alone, which forwards it once)
// and has it killed when the supervisor dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// lockThread: Pdeathsig is tied to the thread that started the child.
const lockThread = true

// selfExe is this very executable, even if its file was replaced or
// removed since it started (orchestrate.sh renames a new build over it).
// Without /proc, the path it was started from.
func selfExe() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}
