import Foundation
import Glibc

/// A server under measurement, started as its own process.
final class ServerProcess {
    /// Failures to start or reach it.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let process: Process
    /// The port it listens on.
    let port: Int
    /// The SMTP port, when it was started with `--smtp-port` (its second line names it).
    private(set) var smtpPort: Int?

    /// The process id.
    var pid: Int32 { process.processIdentifier }

    private init(process: Process, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts `appleid-mock serve --port 0` and returns once it has printed its address.
    static func startMock(binary: String, arguments extra: [String] = []) throws -> ServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0"] + extra
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty {
                process.waitUntilExit()
                throw Failure(description: "\(binary) exited with \(process.terminationStatus) before listening")
            }
            line += data
        }
        // Only the first line: with --smtp-port the second may have come in the same read.
        let text = String(decoding: line.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard let colon = text.lastIndex(of: ":"),
              let port = Int(text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw Failure(description: "unexpected first line from \(binary): \(text)")
        }
        let server = ServerProcess(process: process, port: port)
        if extra.contains("--smtp-port") {
            // The rest of the first read, then more until the second line is whole.
            var rest = Array(line[(line.firstIndex(of: UInt8(ascii: "\n")) ?? line.endIndex)...].dropFirst())
            while !rest.contains(UInt8(ascii: "\n")) {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { break }
                rest += data
            }
            let second = String(decoding: rest.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            server.smtpPort = second.split(separator: ":").last.flatMap { Int($0) }
        }
        return server
    }

    /// Wraps a process that listens on a known port, once something answers there.
    static func adopt(_ process: Process, port: Int) throws -> ServerProcess {
        for _ in 0..<500 {
            if (try? RawConnection(port: port)) != nil { return ServerProcess(process: process, port: port) }
            usleep(10_000)
        }
        process.terminate()
        throw Failure(description: "nothing listens on port \(port)")
    }

    /// Resident memory now, in MiB (VmRSS).
    var residentMiB: Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Double(line.split(separator: " ")[1]) else { return 0 }
        return kilobytes / 1024
    }

    /// The most resident memory it has had, in MiB (VmHWM).
    var peakResidentMiB: Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Double(line.split(separator: " ")[1]) else { return 0 }
        return kilobytes / 1024
    }

    /// CPU time the process has used so far (user + system), in seconds.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after the command name; utime and stime are the 14th and 15th of the line.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time this (benchmark) process has used so far, in seconds.
    static var ownCPUSeconds: Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Open descriptors now.
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// SIGTERM, then waits for the exit.
    func stop() {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        process.waitUntilExit()
    }

    /// A port nothing listens on right now.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(fd, pointer, length)
                _ = getsockname(fd, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
