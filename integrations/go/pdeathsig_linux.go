package appleidmock

import "syscall"

// The kernel stops the mock when the test process dies, by any means (SIGKILL included): nothing
// the kit does at exit is needed for it.
func mockProcessAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
