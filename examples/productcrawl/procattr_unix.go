//go:build unix && !linux

package main

import (
	"os"
	"syscall"
)

// childAttr puts the crawl's child in a process group of its own (a
// terminal's Ctrl-C reaches the supervisor alone, which forwards it once).
// This system has no parent-death signal: a supervisor killed with
// SIGKILL leaves its child to finish the run on its own.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

const lockThread = false

func selfExe() (string, error) { return os.Executable() }
