package redis_test

import "syscall"

// dieWithTest makes a started redis-server die with the test process.
func dieWithTest() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
