extension ControlRequest {
    /// Longest a long poll (`wait=S`) may hold a request, in seconds.
    static let maxWait: Double = 60

    /// A long poll's `wait` parameter: seconds from 0 to `maxWait`, or a failure naming `wait`.
    static func waitSeconds(_ value: String) throws(Failure) -> Double {
        guard let seconds = Double(value), seconds.isFinite, (0...maxWait).contains(seconds) else {
            throw Failure(message: "expected seconds from 0 to 60", field: "wait")
        }
        return seconds
    }
}
