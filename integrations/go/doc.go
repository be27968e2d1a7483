// Package appleidmock runs AppleIDMock (a local appleid.apple.com) for Go tests, with no
// dependency beyond the standard library.
//
//	func TestSignIn(t *testing.T) {
//		mock := appleidmock.Start(t) // stopped by t.Cleanup
//		credential, err := mock.SignIn("alice", "com.example.app", nil)
//		...
//	}
//
// Start runs the appleid-mock binary (the Binary option, APPLEID_MOCK_BIN, or PATH) on a free
// port, waits for its health check, and wires a notification receiver into its scenario that
// verifies each signed notification against /auth/keys. The mock stops when the test ends, on a
// failed start, and when the test process dies by any means, SIGKILL included (the kernel's
// parent-death signal). Attach drives a mock something else runs (the GitHub Action, compose, a
// container).
//
// Every refusal is an *Error whose message is the mock's reason with the field at fault.
package appleidmock
