import Glibc

/// The lock that makes one process the holder of a state file, taken before SQLite opens it:
/// an exclusive `flock` on the file itself, held by an open descriptor until `release()`.
/// Exactly one of any number of processes starting on one file at the same moment gets it; the
/// others are refused at once as `inUse` (with SQLite's own locks alone, two starts
/// on a new file could both take a shared lock and then both be refused the write lock).
///
/// A new file is made under a temporary name, locked, and only then linked to its name, so no
/// other process ever sees it unlocked and empty: an empty file found at `path` was made by no
/// mock now running, and the caller refuses it. `flock` locks are independent of
/// SQLite's POSIX record locks on Linux; the descriptor stays open while SQLite has the file
/// (closing any descriptor of a file drops every POSIX lock the process holds on it).
final class StateFileLock {
    /// Why the lock was not taken.
    enum Failure: Error, Equatable {
        /// Another process holds it.
        case held
        /// The file could not be opened, made or locked (the system's words).
        case io(String)
    }

    /// A point on the way to the lock where a test may hold one opener while another goes on,
    /// to force the interleavings that two processes starting at once can produce.
    enum Step: Sendable {
        /// A new file is made under its temporary name and locked, not yet linked to `path`.
        case madeTemporary
        /// `path` exists (or appeared meanwhile) and is about to be opened and locked.
        case openingExisting
    }

    private var fd: Int32
    /// Whether this process made the file (it did not exist when the lock was taken).
    let made: Bool
    /// The file's size in bytes when the lock was taken.
    let size: Int64

    /// Locks the file at `path`, making it (empty) when `create` and it does not exist yet.
    /// `pause` is called at each `Step` (tests only; it returns at once by default).
    init(path: String, create: Bool, pause: (Step) -> Void = { _ in }) throws(Failure) {
        var made = false
        var fd: Int32 = -1
        // nil from `make`: another process made it a moment ago; it is locked as an existing file.
        if create, let descriptor = try Self.make(path, pause: pause) {
            fd = descriptor
            made = true
        }
        if fd < 0 {
            pause(.openingExisting)
            fd = open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw .io("cannot open: \(String(cString: strerror(errno)))") }
            if let failure = Self.lock(fd) {
                close(fd)
                throw failure
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw .io("cannot read its size: \(message)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .io("not a regular file")
        }
        self.fd = fd
        self.made = made
        size = Int64(info.st_size)
    }

    deinit {
        release()
    }

    /// Lets the file go: call it only after SQLite closed the file.
    func release() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    /// Makes `path` empty and locked: a temporary file beside it, locked, then linked to `path`
    /// (which fails when `path` exists), then its temporary name removed. Nil when `path`
    /// appeared meanwhile.
    private static func make(_ path: String, pause: (Step) -> Void) throws(Failure) -> Int32? {
        var attempt = 0
        while true {
            let temporary = "\(path).new-\(getpid())-\(attempt)"
            let fd = open(temporary, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0o644)
            guard fd >= 0 else {
                if errno == EEXIST && attempt < 8 {
                    attempt += 1
                    continue
                }
                throw .io("cannot create: \(String(cString: strerror(errno)))")
            }
            if let failure = lock(fd) {
                unlink(temporary)
                close(fd)
                throw failure
            }
            pause(.madeTemporary)
            let linked = link(temporary, path) == 0
            let linkError = errno
            unlink(temporary)
            guard linked else {
                close(fd)
                guard linkError == EEXIST else { throw .io("cannot create: \(String(cString: strerror(linkError)))") }
                return nil
            }
            return fd
        }
    }

    /// Takes the exclusive lock without waiting; nil when taken.
    private static func lock(_ fd: Int32) -> Failure? {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            return errno == EWOULDBLOCK ? .held : .io("cannot lock: \(String(cString: strerror(errno)))")
        }
        return nil
    }
}
