import Glibc

/// Reads small files (scenarios, PEM keys) with the size checked before anything is read: a
/// file is opened without blocking, must be a regular file, and at most `limit + 1` bytes are
/// ever read, so a 3 GB file or `/dev/zero` costs nothing.
package enum BoundedFile {
    /// Why a file could not be read; `description` is one line for the CLI.
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What went wrong, e.g. `expected at most 65536 bytes, found 135000000`.
        package var message: String

        /// A failure saying `message`.
        package init(message: String) {
            self.message = message
        }

        /// The message.
        package var description: String { message }
    }

    /// The whole file at `path`, which must be a regular file of at most `limit` bytes.
    package static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO with no writer must not hang; regular files ignore it.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Failure(message: "cannot read file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(message: "cannot read file \(path): \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Failure(message: "cannot read file \(path): not a regular file") }
        if info.st_size > limit { throw Failure(message: "expected at most \(limit) bytes, found \(info.st_size)") }
        // The size can lie (files in /proc say 0, a file can grow): read until EOF, never past limit + 1.
        // The buffer starts at the size the file says and grows as bytes come: a 60 MB state
        // import under a 256 MiB limit must not make 256 MiB resident.
        var bytes = [UInt8](repeating: 0, count: min(limit, max(0, Int(info.st_size))) + 1)
        var total = 0
        while total <= limit {
            if total == bytes.count { bytes.append(contentsOf: repeatElement(0, count: min(limit + 1, bytes.count * 2) - bytes.count)) }
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(message: "cannot read file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            total += count
        }
        guard total <= limit else { throw Failure(message: "expected at most \(limit) bytes, found more") }
        bytes.removeSubrange(total...)
        return bytes
    }

    /// The file as UTF-8 text.
    package static func text(_ path: String, limit: Int) throws(Failure) -> String {
        let bytes = try read(path, limit: limit)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Failure(message: "\(path): not UTF-8 text") }
        return text
    }

    /// Whether `path` names a directory (following links).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
