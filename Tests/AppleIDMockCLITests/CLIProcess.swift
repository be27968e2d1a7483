import Foundation
import MiniHTTP
import XCTest

/// Runs the built `appleid-mock` binary as a child process.
struct CLIProcess {
    /// The repository root, where `Keys/` lives.
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// `.build/<config>/appleid-mock`, next to the test bundle.
    static let binary: String = {
        var url = Bundle(for: BundleMarker.self).bundleURL
        if url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url.appendingPathComponent("appleid-mock").path
    }()

    /// What a finished run produced.
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs to completion and collects output.
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String = root) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// A loopback port nothing listens on right now (for a process that must know another's
    /// port before either starts; the kernel hands out ephemeral ports in turn, so another
    /// taking it in the moment between is unlikely).
    static func unusedPort() throws -> Int {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.eventLoopCount = 1
        let probe = try HTTPServer.start(configuration: configuration, routes: Router().build())
        defer { probe.stop() }
        return probe.port
    }

    /// A running `serve` process whose first stdout line has been read.
    final class Server {
        let process = Process()
        let firstLine: String
        private let out = Pipe()
        private let err = Pipe()

        /// Starts `appleid-mock arguments…`; with `descriptorLimit`, under `ulimit -n` of that many;
        /// with `watchdog`, killed after that many seconds, so a line that never comes fails the
        /// test instead of hanging it (nothing is timed).
        init(_ arguments: [String], environment: [String: String] = [:], directory: String = CLIProcess.root,
             descriptorLimit: Int? = nil, watchdog: Double? = nil) throws {
            if let descriptorLimit {
                process.executableURL = URL(fileURLWithPath: "/bin/bash")
                process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", CLIProcess.binary] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: CLIProcess.binary)
                process.arguments = arguments
            }
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = out
            process.standardError = err
            try process.run()
            if let watchdog {
                DispatchQueue.global().asyncAfter(deadline: .now() + watchdog) { [process] in
                    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                }
            }
            firstLine = Self.readLine(out.fileHandleForReading) ?? ""
        }

        /// The next line of stdout, without its newline; nil at the end.
        func readLine() -> String? { Self.readLine(out.fileHandleForReading) }

        private static func readLine(_ handle: FileHandle) -> String? {
            var line: [UInt8] = []
            while true {
                guard let byte = handle.readData(ofLength: 1).first else { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
                if byte == 10 { return String(decoding: line, as: UTF8.self) }
                line.append(byte)
            }
        }

        /// The port from `listening on http://HOST:PORT`.
        var port: Int? { firstLine.split(separator: ":").last.flatMap { Int($0) } }

        /// Waits for the process to exit on its own; returns the exit status, the rest of stdout, and stderr.
        func waitForExit() -> (status: Int32, rest: String, stderr: String) {
            let rest = out.fileHandleForReading.readDataToEndOfFile()
            let errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: rest, as: UTF8.self), String(decoding: errors, as: UTF8.self))
        }

        /// Sends `signal` and returns the exit status, the rest of stdout, and stderr.
        @discardableResult
        func stop(signal: Int32 = SIGTERM) -> (status: Int32, rest: String, stderr: String) {
            if process.isRunning { kill(process.processIdentifier, signal) }
            return waitForExit()
        }
    }
}

private final class BundleMarker {}
