// Package childtest runs a test binary again as a child process, for the
// tests that must kill a process in the middle of a write, fill its disk
// or hold a file lock against another process.
//
// The child is the same test binary run with -test.run=^TestHelperProcess$:
// the package's TestHelperProcess reads what to do from the environment
// Start passes, does nothing when it is not set, and reports on standard
// output with lines that begin with "BW:" (Say writes one). Start hands the
// parent those lines, without the prefix, and Next waits for the next one.
package childtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Prefix begins every line a child reports on.
const Prefix = "BW:"

// Start runs this test binary's TestHelperProcess as a child with env
// added to this process's environment, and returns the child and a
// channel of its report lines, closed when its output ends. The child is
// killed when t ends; if t failed, its standard error is logged.
func Start(t testing.TB, env ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), Prefix); ok {
				lines <- l
			}
		}
		close(lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("child %v stderr:\n%s", env, stderr.String())
		}
	})
	return cmd, lines
}

// Next waits up to a minute for the child's next report line, which must
// begin with word, and returns the rest of it, trimmed.
func Next(t testing.TB, lines <-chan string, word string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("the child exited before saying %q", word)
		}
		if !strings.HasPrefix(l, word) {
			t.Fatalf("the child said %q, want %q", l, word)
		}
		return strings.TrimSpace(strings.TrimPrefix(l, word))
	case <-time.After(time.Minute):
		t.Fatalf("the child did not say %q within a minute", word)
	}
	return ""
}

// Say writes a report line, for the parent's Next, from a child.
func Say(format string, args ...any) { fmt.Printf(Prefix+format+"\n", args...) }
