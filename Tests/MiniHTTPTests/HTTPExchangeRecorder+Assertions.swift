import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

extension HTTPExchangeRecorder {
    /// The one exchange the recorder sees, failing when it sees no exchange or more than one.
    func onlyExchange(file: StaticString = #filePath, line: UInt = #line) throws -> HTTPExchange {
        let seen = waitForExchanges(1)
        // Anything reported late would arrive now.
        usleep(50_000)
        XCTAssertEqual(exchanges.count, 1, "exchanges: \(exchanges)", file: file, line: line)
        return try XCTUnwrap(seen.first, file: file, line: line)
    }
}
