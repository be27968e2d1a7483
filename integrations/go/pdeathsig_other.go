//go:build !linux

package appleidmock

import "syscall"

// No parent-death signal outside Linux (the mock itself runs on Linux; elsewhere the kit is used
// with Attach, or Start relies on t.Cleanup and Stop).
func mockProcessAttributes() *syscall.SysProcAttr { return nil }
