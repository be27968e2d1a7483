package appleidmock

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processesNaming is the pids of processes whose command line names text (the process table).
// A zombie (exited, not yet reaped) holds no command line and runs nothing.
func processesNaming(text string) []int {
	var found []int
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		commandLine, err := os.ReadFile("/proc/" + entry.Name() + "/cmdline")
		if err == nil && strings.Contains(string(commandLine), text) {
			found = append(found, pid)
		}
	}
	return found
}

// waitForNoProcessNaming waits until no process names text; it answers the ones still there
// after a minute (a bound for a broken kit, not a timing assertion: a working one is done in
// milliseconds).
func waitForNoProcessNaming(text string) []int {
	deadline := time.Now().Add(time.Minute)
	for {
		left := processesNaming(text)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type helperRun struct {
	output  string
	status  int
	signal  syscall.Signal
	started int
	seen    []int
	left    []int
}

// runHelper runs this test binary's TestHelperProcess in mode, with a TMPDIR of its own (where
// the kit writes the scenario its mock serves, so the process table tells whether a mock of that
// child is still running). When the child says "started PID", signal (if not 0) is sent to it.
func runHelper(t *testing.T, mode string, signal syscall.Signal, environment ...string) helperRun {
	t.Helper()
	tmp := t.TempDir()
	command := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
	command.Env = append(append(os.Environ(), "APPLEID_MOCK_KIT_HELPER="+mode, "TMPDIR="+tmp), environment...)
	stdout, err := command.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	command.Stderr = command.Stdout
	// The child goes on past "started" when told: after the table is read.
	proceed, err := command.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := command.Start(); err != nil {
		t.Fatal(err)
	}
	var run helperRun
	var output strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		output.WriteString(line + "\n")
		if strings.HasPrefix(line, "started ") && run.started == 0 {
			run.started, _ = strconv.Atoi(strings.TrimPrefix(line, "started "))
			run.seen = processesNaming(tmp)
			if signal != 0 {
				_ = command.Process.Signal(signal)
			} else {
				_, _ = proceed.Write([]byte("go on\n"))
			}
		}
	}
	_ = command.Wait()
	run.output = output.String()
	status := command.ProcessState.Sys().(syscall.WaitStatus)
	run.status = status.ExitStatus()
	if status.Signaled() {
		run.signal = status.Signal()
	}
	run.left = waitForNoProcessNaming(tmp)
	return run
}
