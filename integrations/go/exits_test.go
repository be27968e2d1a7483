package appleidmock

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// TestHelperProcess is the child the exit-path tests run (this binary, in one mode); it does
// nothing in a normal run.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv("APPLEID_MOCK_KIT_HELPER") {
	case "":
		t.Skip("only the child of an exit-path test runs this")
	case "forgets":
		mock, err := StartProcess()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("started %d\n", mock.PID())
		awaitGoOn()
	case "fails":
		mock := Start(t)
		fmt.Printf("started %d\n", mock.PID())
		awaitGoOn()
		t.Fatal("not what it says")
	case "panics":
		mock := Start(t)
		fmt.Printf("started %d\n", mock.PID())
		awaitGoOn()
		panic("the test panicked")
	case "waits":
		mock := Start(t)
		fmt.Printf("started %d\n", mock.PID())
		select {}
	case "tls":
		tls := os.Getenv("KIT_TEST_TLS")
		options := []Option{ServeArgs("--tls-cert", tls+"/cert.pem", "--tls-key", tls+"/key.pem")}
		if os.Getenv("KIT_TEST_CA") != "" {
			options = append(options, CA(tls+"/ca.pem"))
		}
		mock, err := StartProcess(options...)
		if err != nil {
			fmt.Printf("refused: %v\n", err)
			os.Exit(3)
		}
		fmt.Println("healthy")
		_, _ = mock.Stop()
	}
}

// awaitGoOn blocks until the parent has read the process table (a line on stdin).
func awaitGoOn() {
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// Every way out of a test process stops the mock it started: the end of a test with no Stop, a
// failing test, a panic, SIGINT, SIGTERM, SIGHUP and SIGKILL, and a failed health wait. The twin
// of each: while the child ran, its mock was in the process table.
func TestExitPaths_LeaveNoMockRunning(t *testing.T) {
	for _, c := range []struct {
		mode   string
		signal syscall.Signal
		status int
		output string
	}{
		{mode: "forgets", status: 0},
		{mode: "fails", status: 1, output: "not what it says"},
		{mode: "panics", status: 2, output: "panic: the test panicked"},
		{mode: "waits", signal: syscall.SIGINT, status: -1},
		{mode: "waits", signal: syscall.SIGTERM, status: -1},
		{mode: "waits", signal: syscall.SIGHUP, status: -1},
		{mode: "waits", signal: syscall.SIGKILL, status: -1},
	} {
		c := c
		t.Run(fmt.Sprintf("%s %v", c.mode, c.signal), func(t *testing.T) {
			run := runHelper(t, c.mode, c.signal)
			if run.status != c.status || (c.signal != 0 && run.signal != c.signal) || !strings.Contains(run.output, c.output) {
				t.Fatalf("the child ended with status %d, signal %v; want %d, %v, and %q in:\n%s", run.status, run.signal, c.status, c.signal, c.output, run.output)
			}
			if run.started == 0 || !reflect.DeepEqual(run.seen, []int{run.started}) {
				t.Fatalf("while the child ran, its mock %d was not the one process in the table: %v\n%s", run.started, run.seen, run.output)
			}
			if len(run.left) != 0 {
				t.Fatalf("still running after the child ended: %v", run.left)
			}
		})
	}
}

func TestExitPaths_AFailedHealthWaitStopsTheMock_SayingWhatToGive(t *testing.T) {
	binary, err := FindBinary("")
	if err != nil {
		t.Fatal(err)
	}
	tls := t.TempDir()
	if output, err := exec.Command(binary, "tls", "generate", "--out", tls).CombinedOutput(); err != nil {
		t.Fatalf("tls generate: %v\n%s", err, output)
	}
	refused := runHelper(t, "tls", 0, "KIT_TEST_TLS="+tls)
	if refused.status != 3 || !strings.Contains(refused.output, "serves a certificate Go does not trust (x509: certificate signed by unknown authority): give the kit its CA (the CA option") {
		t.Fatalf("status %d:\n%s", refused.status, refused.output)
	}
	if len(refused.left) != 0 {
		t.Fatalf("still running: %v", refused.left)
	}
	// The twin: with the CA the same mock is healthy.
	trusted := runHelper(t, "tls", 0, "KIT_TEST_TLS="+tls, "KIT_TEST_CA=1")
	if trusted.status != 0 || !strings.Contains(trusted.output, "\nhealthy\n") || len(trusted.left) != 0 {
		t.Fatalf("status %d, left %v:\n%s", trusted.status, trusted.left, trusted.output)
	}
}
