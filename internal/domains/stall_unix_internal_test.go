//go:build linux || darwin

package domains

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The stall clock counts a stop of the whole process (SIGSTOP, as a paused VM
// or a starved machine).
func TestTheStallClockCountsAStopOfTheProcess(t *testing.T) {
	m := StallMark()
	time.Sleep(5 * stallPeriod)
	t.Logf("counted %v while the process ran for %v", StallSince(m), 5*stallPeriod)
	m = StallMark()
	cont := exec.Command("sh", "-c", "sleep 0.2; kill -CONT "+strconv.Itoa(os.Getpid()))
	if err := cont.Start(); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	cont.Wait()
	time.Sleep(2 * stallPeriod) // the late tick runs
	if s := StallSince(m); s < 150*time.Millisecond {
		t.Errorf("%v counted across a stop of 200 ms", s)
	}
}
