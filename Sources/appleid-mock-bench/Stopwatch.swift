import Glibc

/// Monotonic time in nanoseconds.
enum Stopwatch {
    /// Now, on the monotonic clock.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Milliseconds since `start`.
    static func milliseconds(since start: UInt64) -> Double {
        Double(now() - start) / 1e6
    }
}
