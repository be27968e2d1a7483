import FoundationEssentials
import Glibc

// The static Swift runtime reads the process's arguments from /proc/self/cmdline. Without /proc
// (a bare chroot, a minimal container) they silently come back as the program alone, and the
// mock would serve its defaults instead of what it was told (`--port` ignored).
guard access("/proc/self/cmdline", R_OK) == 0 else {
    let message = "appleid-mock: cannot read its command line from /proc/self/cmdline; mount /proc (the static Swift runtime reads its arguments there)\n"
    _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    _exit(2)
}
exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
