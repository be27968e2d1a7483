import AppleIDMock
import Synchronization

/// A log sink for a mock under test: keeps every line, hands them over on `take()`.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// The sink to put in `AppleIDMockConfiguration.log`.
    var sink: @Sendable (String) -> Void {
        { [self] line in self.lines.withLock { $0.append(line) } }
    }

    /// The lines written since the last call.
    func take() -> [String] {
        lines.withLock { lines in
            defer { lines = [] }
            return lines
        }
    }
}
