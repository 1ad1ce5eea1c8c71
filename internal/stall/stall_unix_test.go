//go:build linux || darwin

package stall

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The clock counts a stop of the whole process (SIGSTOP, as a paused VM
// or a starved machine).
func TestTheClockCountsAStopOfTheProcess(t *testing.T) {
	m := Mark()
	time.Sleep(5 * Period)
	t.Logf("counted %v while the process ran for %v", Since(m), 5*Period)
	m = Mark()
	cont := exec.Command("sh", "-c", "sleep 0.2; kill -CONT "+strconv.Itoa(os.Getpid()))
	if err := cont.Start(); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	cont.Wait()
	time.Sleep(2 * Period) // the late tick runs
	if s := Since(m); s < 150*time.Millisecond {
		t.Errorf("%v counted across a stop of 200 ms", s)
	}
}
