import MiniHTTP

/// One exchange as the journal keeps it: the request with its parts clipped to their bounds
/// (nothing past them is kept, so the ring's memory has a ceiling), the answer's status and size,
/// and the handler's note. Stored as bytes in the journal's ring (`encode`), decoded when read.
/// What filters read — status, method, path, route, `client_id`, `grant_type`, whether it went to
/// the control API or was the dashboard's own — is worked out once, when the exchange is kept,
/// and stored first, so a read filters on the bytes (`Keys`) and decodes only what it lists
/// (every read decoded every kept entry, 210 MB for one count of heavy form posts).
struct JournalRecord: Sendable {
    /// Body bytes kept of a request.
    static let bodyLimit = 4096
    /// Header bytes (names and values) kept of a request; later fields are dropped.
    static let headerLimit = 4096
    /// Request-target bytes kept.
    static let targetLimit = 4096
    /// Bytes kept of each of the note's and the status line's texts.
    static let textLimit = 16 * 1024
    /// Event numbers kept of one request (a reset or a scenario load may record more).
    static let eventLimit = 100_000

    /// Real time when the exchange ended, seconds since 1970.
    var time: Double
    var peer: HTTPPeerAddress?
    var isTLS: Bool
    /// The request as kept; nil when none was read completely.
    var request: HTTPRequest?
    /// Whether the body went past `bodyLimit` (the kept part is its start).
    var bodyTruncated: Bool
    var status: HTTPStatus?
    var responseBytes: Int
    var microseconds: UInt64
    /// Why MiniHTTP answered or cut the exchange itself, in words.
    var serverReason: String?
    var note: JournalNote?
    /// What filters read, as kept.
    var keys = Keys()

    /// What filters read of a record: worked out when it is kept (`Plan`).
    struct Keys: Sendable, Equatable {
        /// The method; nil without a complete request.
        var method: String?
        /// The path as sent (percent-encoded, without the query).
        var path: String?
        /// The route that took it (`/__mock/keys/{kid}`).
        var route: String?
        /// The `client_id` sent: in a form body, else the query, else a JSON body's top level.
        var clientID: String?
        /// A form body's `grant_type`.
        var grantType: String?
    }
}

// MARK: - Bytes

extension JournalRecord {
    /// The flag of a request to the control API (for `Plan.keys`).
    static var controlFlag: UInt8 { Flag.control }
    /// The flag of the dashboard's own request (for `Plan.keys`).
    static var dashboardFlag: UInt8 { Flag.dashboard }
}

/// The layout of a record in the ring: fixed fields, then length-prefixed strings (a length of
/// `UInt32.max` for nil), little-endian, unaligned.
///
///     time f64 · microseconds u64 · response bytes u64 · status u16 (0: none) · flags u8
///     [status reason] [peer host, port u16] [server reason]
///     [note: error?, reason?, fault?, events count u32, events u64…]
///     [request: method, target, minor u8, header count u32, (name, value)…, body]
extension JournalRecord {
    private enum Flag {
        static let tls: UInt8 = 1
        static let request: UInt8 = 2
        static let bodyTruncated: UInt8 = 4
        static let peer: UInt8 = 8
        static let note: UInt8 = 16
        static let serverReason: UInt8 = 32
        /// The request went to the control API (`/__mock/…`).
        static let control: UInt8 = 64
        /// The dashboard's own request (its page, script, style sheet, data, or marked long poll).
        static let dashboard: UInt8 = 128
    }

    /// What of an exchange's request is kept: decided once, then sized and written.
    struct Plan {
        let keys: Keys
        let flags: UInt8
        let note: JournalNote?
        let serverReason: String?
        let targetBytes: Int
        let headerFields: Int
        let bodyBytes: Int
        let bodyTruncated: Bool
        /// The record's size in bytes.
        let length: Int

        init(_ exchange: borrowing HTTPExchange, routes: RouteNames?) {
            var flags: UInt8 = 0
            (keys, flags) = Self.keys(exchange, routes: routes)
            if exchange.isTLS { flags |= Flag.tls }
            if exchange.request != nil { flags |= Flag.request }
            if exchange.peer != nil { flags |= Flag.peer }
            note = exchange.note as? JournalNote
            if note != nil { flags |= Flag.note }
            if exchange.reason != nil { flags |= Flag.serverReason }
            serverReason = exchange.reason?.description
            // Every part has a bound, so a record's length does too (about 150 KiB + 800 KiB of events).
            func text(_ value: String?) -> Int { 4 + min(value?.utf8.count ?? 0, JournalRecord.textLimit) }
            var length = 8 + 8 + 8 + 2 + 1
            length += text(keys.method) + text(keys.path) + text(keys.route) + text(keys.clientID) + text(keys.grantType)
            if let status = exchange.status { length += text(status.reason) }
            if let peer = exchange.peer { length += text(peer.host) + 2 }
            if let serverReason { length += text(serverReason) }
            if let note {
                length += text(note.error) + text(note.reason) + text(note.fault) + 4 + 8 * min(note.events.count, JournalRecord.eventLimit)
            }
            guard let request = exchange.request else {
                (targetBytes, headerFields, bodyBytes, bodyTruncated) = (0, 0, 0, false)
                self.flags = flags
                self.length = length
                return
            }
            targetBytes = min(request.target.utf8.count, JournalRecord.targetLimit)
            var used = 0
            var fields = 0
            for field in request.headers.fields {
                // The method and header names and values are within MiniHTTP's head limit.
                let size = field.name.utf8.count + field.value.utf8.count
                if used + size > JournalRecord.headerLimit { break }
                used += size
                fields += 1
            }
            headerFields = fields
            bodyBytes = min(request.body.count, JournalRecord.bodyLimit)
            bodyTruncated = request.body.count > JournalRecord.bodyLimit
            if bodyTruncated { flags |= Flag.bodyTruncated }
            self.flags = flags
            length += text(request.method.rawValue) + 4 + targetBytes + 1 + 4 + 8 * fields + used + 4 + bodyBytes
            self.length = length
        }
    }

    /// Writes `exchange` as `plan` keeps it at `base`, which has `plan.length` bytes.
    static func encode(_ exchange: borrowing HTTPExchange, time: Double, plan: Plan, into base: UnsafeMutableRawPointer) {
        var writer = Writer(base: base, capacity: plan.length)
        defer { assert(writer.offset == plan.length, "JournalRecord.Plan sized the record wrong") }
        writer.put(time.bitPattern)
        writer.put(exchange.microseconds)
        writer.put(UInt64(max(0, exchange.responseBodyCount)))
        let code = exchange.status.map { UInt16(clamping: $0.code) } ?? 0
        writer.put(code)
        writer.put(plan.flags)
        // One at a time: an array of the five would be an allocation at every exchange.
        writer.put(plan.keys.method, limit: JournalRecord.textLimit)
        writer.put(plan.keys.path, limit: JournalRecord.textLimit)
        writer.put(plan.keys.route, limit: JournalRecord.textLimit)
        writer.put(plan.keys.clientID, limit: JournalRecord.textLimit)
        writer.put(plan.keys.grantType, limit: JournalRecord.textLimit)
        if let status = exchange.status { writer.put(status.reason, limit: JournalRecord.textLimit) }
        if let peer = exchange.peer {
            writer.put(peer.host, limit: JournalRecord.textLimit)
            writer.put(UInt16(clamping: peer.port))
        }
        if let reason = plan.serverReason { writer.put(reason, limit: JournalRecord.textLimit) }
        if let note = plan.note {
            writer.put(note.error, limit: JournalRecord.textLimit)
            writer.put(note.reason, limit: JournalRecord.textLimit)
            writer.put(note.fault, limit: JournalRecord.textLimit)
            let events = note.events.prefix(JournalRecord.eventLimit)
            writer.put(UInt32(events.count))
            for event in events { writer.put(event) }
        }
        guard let request = exchange.request else { return }
        writer.put(request.method.rawValue, limit: JournalRecord.textLimit)
        writer.put(request.target, limit: plan.targetBytes)
        writer.put(UInt8(clamping: request.minorVersion))
        writer.put(UInt32(plan.headerFields))
        for field in request.headers.fields.prefix(plan.headerFields) {
            writer.put(field.name, limit: JournalRecord.textLimit)
            writer.put(field.value, limit: JournalRecord.textLimit)
        }
        writer.put(UInt32(plan.bodyBytes))
        request.body.withUnsafeBytes { body in writer.put(bytes: UnsafeRawBufferPointer(rebasing: body.prefix(plan.bodyBytes))) }
    }

    /// The record written by `encode`; nil when the bytes are not one (never for the ring's own).
    init?(decoding bytes: UnsafeRawBufferPointer) {
        var reader = Reader(bytes: bytes)
        guard let bits: UInt64 = reader.take(), let microseconds: UInt64 = reader.take(), let responseBytes: UInt64 = reader.take(),
              let code: UInt16 = reader.take(), let flags: UInt8 = reader.take() else { return nil }
        time = Double(bitPattern: bits)
        self.microseconds = microseconds
        self.responseBytes = Int(clamping: responseBytes)
        isTLS = flags & Flag.tls != 0
        bodyTruncated = flags & Flag.bodyTruncated != 0
        guard let keyMethod = reader.string(), let keyPath = reader.string(), let route = reader.string(), let clientID = reader.string(),
              let grantType = reader.string() else { return nil }
        keys = Keys(method: keyMethod, path: keyPath, route: route, clientID: clientID, grantType: grantType)
        if code != 0 {
            guard let phrase = reader.string() else { return nil }
            status = HTTPStatus(code: Int(code), reason: phrase ?? "")
        }
        if flags & Flag.peer != 0 {
            guard let host = reader.string(), let port: UInt16 = reader.take() else { return nil }
            peer = HTTPPeerAddress(host: host ?? "", port: Int(port))
        }
        if flags & Flag.serverReason != 0 {
            guard let reason = reader.string() else { return nil }
            serverReason = reason
        }
        if flags & Flag.note != 0 {
            guard let error = reader.string(), let reason = reader.string(), let fault = reader.string(), let count: UInt32 = reader.take(),
                  Int(count) <= reader.remaining / 8 else { return nil }
            var events: [UInt64] = []
            events.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let event: UInt64 = reader.take() else { return nil }
                events.append(event)
            }
            note = JournalNote(error: error, reason: reason, events: events, fault: fault)
        }
        guard flags & Flag.request != 0 else { return }
        guard let method = reader.string(), let target = reader.string(), let minor: UInt8 = reader.take(),
              let fields: UInt32 = reader.take(), Int(fields) <= reader.remaining / 8 else { return nil }
        var headers = HTTPHeaders()
        for _ in 0..<fields {
            guard let name = reader.string(), let value = reader.string() else { return nil }
            headers.add(name ?? "", value ?? "")
        }
        guard let body = reader.run() else { return nil }
        request = HTTPRequest(method: HTTPMethod(rawValue: method ?? ""), target: target ?? "", minorVersion: Int(minor), headers: headers,
                              body: body)
    }

    /// What filters read of a kept record, straight from its bytes: no string is made, nothing
    /// else is decoded. Valid while the bytes are (under the journal's lock).
    struct KeyView {
        /// The status answered (0: none).
        var status: UInt16
        var isControl: Bool
        var isDashboard: Bool
        /// The keys' UTF-8 bytes; nil for a key the record has not.
        var method: UnsafeRawBufferPointer?
        var path: UnsafeRawBufferPointer?
        var route: UnsafeRawBufferPointer?
        var clientID: UnsafeRawBufferPointer?
        var grantType: UnsafeRawBufferPointer?
    }

    /// The keys of the record in `bytes`; nil when the bytes are not one (never for the ring's own).
    static func keys(of bytes: UnsafeRawBufferPointer) -> KeyView? {
        var reader = Reader(bytes: bytes)
        guard let _: UInt64 = reader.take(), let _: UInt64 = reader.take(), let _: UInt64 = reader.take(), let code: UInt16 = reader.take(),
              let flags: UInt8 = reader.take(), let method = reader.raw(), let path = reader.raw(), let route = reader.raw(),
              let clientID = reader.raw(), let grantType = reader.raw() else { return nil }
        return KeyView(status: code, isControl: flags & Flag.control != 0, isDashboard: flags & Flag.dashboard != 0,
                       method: method, path: path, route: route, clientID: clientID, grantType: grantType)
    }

    /// Writes fixed-size values and length-prefixed strings at a pointer with `capacity` bytes of
    /// room. `Plan` sizes the record exactly; each write is checked all the same, so a mistake
    /// there cuts a record short (and it reads back as nil) rather than writing past it.
    private struct Writer {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        var offset = 0

        mutating func put<Value: FixedWidthInteger>(_ value: Value) {
            let size = MemoryLayout<Value>.size
            guard capacity - offset >= size else { return }
            (base + offset).storeBytes(of: value.littleEndian, as: Value.self)
            offset += size
        }

        mutating func put(bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, bytes.count > 0, capacity - offset >= bytes.count else { return }
            (base + offset).copyMemory(from: source, byteCount: bytes.count)
            offset += bytes.count
        }

        /// The string's first `limit` UTF-8 bytes, or nil.
        mutating func put(_ text: String?, limit: Int) {
            guard var text else { return put(UInt32.max) }
            let count = min(text.utf8.count, limit)
            put(UInt32(count))
            text.withUTF8 { utf8 in put(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8).prefix(count))) }
        }
    }

    /// Reads what `Writer` wrote, each step checked against the bytes left.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var remaining: Int { bytes.count - offset }

        mutating func take<Value: FixedWidthInteger>() -> Value? {
            let size = MemoryLayout<Value>.size
            guard remaining >= size, let base = bytes.baseAddress else { return nil }
            defer { offset += size }
            return Value(littleEndian: (base + offset).loadUnaligned(as: Value.self))
        }

        /// A length-prefixed run of bytes.
        mutating func run() -> [UInt8]? {
            guard let count: UInt32 = take(), Int(count) <= remaining, let base = bytes.baseAddress else { return nil }
            defer { offset += Int(count) }
            return Array(UnsafeRawBufferPointer(start: base + offset, count: Int(count)))
        }

        /// A length-prefixed string's bytes in place: `.some(nil)` for a nil one, nil when the bytes run out.
        mutating func raw() -> UnsafeRawBufferPointer?? {
            guard let count: UInt32 = take() else { return nil }
            if count == UInt32.max { return .some(nil) }
            guard Int(count) <= remaining, let base = bytes.baseAddress else { return nil }
            defer { offset += Int(count) }
            return .some(UnsafeRawBufferPointer(start: base + offset, count: Int(count)))
        }

        /// A length-prefixed string: `.some(nil)` for a nil one, nil when the bytes run out.
        mutating func string() -> String?? {
            guard let count: UInt32 = take() else { return nil }
            if count == UInt32.max { return .some(nil) }
            guard Int(count) <= remaining, let base = bytes.baseAddress else { return nil }
            defer { offset += Int(count) }
            return .some(String(decoding: UnsafeRawBufferPointer(start: base + offset, count: Int(count)), as: UTF8.self))
        }
    }
}
