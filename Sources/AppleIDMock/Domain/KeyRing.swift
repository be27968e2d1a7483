import FoundationEssentials
import JOSE
import Synchronization

/// The RSA keys Apple publishes at `/auth/keys` and signs id_tokens with (apple-reference.md §1.5).
///
/// Keys are immutable once loaded; the ring's list and its active key change only through its
/// own methods, under one lock. The JWKS bytes of each key are cached, so serving the set costs
/// a concatenation.
public final class KeyRing: Sendable {
    /// One signing key with its id.
    public struct SigningKey: Sendable {
        /// The `kid`.
        public let keyID: String
        /// The private key.
        public let privateKey: RSAPrivateKey
        /// Its public JWK, compact JSON bytes.
        let jwkBytes: [UInt8]

        /// Wraps a key; computes its JWK once.
        public init(keyID: String, privateKey: RSAPrivateKey) {
            self.keyID = keyID
            self.privateKey = privateKey
            self.jwkBytes = JSONWriter.compact(JWK(kid: keyID, publicKey: privateKey.publicKey).json)
        }
    }

    private struct State {
        var keys: [SigningKey]
        var activeKeyID: String
    }

    private let state: Mutex<State>

    /// A ring of `keys` signing with `activeKeyID` (the first key when nil).
    public init(keys: [SigningKey], activeKeyID: String? = nil) throws(KeyRingError) {
        guard let first = keys.first else { throw .noKeys }
        let active = activeKeyID ?? first.keyID
        guard keys.contains(where: { $0.keyID == active }) else { throw .unknownKeyID(active) }
        state = Mutex(State(keys: keys, activeKeyID: active))
    }

    /// The published keys in their stored order.
    public var keys: [SigningKey] { state.withLock { $0.keys } }

    /// The key that signs new tokens. The ring never drops its active key, so the lookup always
    /// finds it; the first key stands in rather than trapping should that ever break.
    public var activeKey: SigningKey {
        state.withLock { state in state.keys.first { $0.keyID == state.activeKeyID } ?? state.keys[0] }
    }

    /// The public key with `kid`, if published.
    public func publicKey(keyID: String) -> RSAPublicKey? {
        state.withLock { $0.keys.first { $0.keyID == keyID }?.privateKey.publicKey }
    }

    /// `{"keys":[…]}` exactly as Apple shapes it; in a random order when `shuffled` (Apple's
    /// order changes between fetches, §1.5).
    public func jwksBody(shuffled: Bool) -> [UInt8] {
        var fragments = state.withLock { $0.keys.map(\.jwkBytes) }
        if shuffled { fragments.shuffle() }
        var body: [UInt8] = Array(#"{"keys":["#.utf8)
        body.reserveCapacity(16 + fragments.reduce(0) { $0 + $1.count + 1 })
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: fragment)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    /// Signs `claims` as an RS256 compact JWS with header `{"kid":…,"alg":"RS256"}`.
    public func sign(claims: JSONObject) throws(JOSEError) -> String {
        let key = activeKey
        return try CompactJWS.signRS256(payload: JSONWriter.compact(.object(claims)), kid: key.keyID, key: key.privateKey).compact
    }

    /// Loads `<kid>.pem` files from `directory` (sorted by name, at most `count`), then
    /// generates the rest in memory with Apple-style 10-character ids.
    public static func load(count: Int, directory: String?, activeKeyID: String?, random: RandomSource = .system) throws(KeyRingError) -> KeyRing {
        var keys: [SigningKey] = []
        if let directory {
            guard BoundedFile.isDirectory(directory) else { throw .directoryMissing(directory) }
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".pem") }.sorted()
            for name in names.prefix(count) {
                let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
                let keyID = String(name.dropLast(4))
                // The kid comes from the file name and is published as is (probe finding F13).
                guard ScenarioRules.isKeyID(keyID) else { throw .unreadable(path, "file name: \(ScenarioRules.keyIDExpectation)") }
                let pem: String
                do {
                    pem = try BoundedFile.text(path, limit: 64 * 1024)
                } catch {
                    throw .unreadable(path, error.message)
                }
                do {
                    let key = try RSAPrivateKey(pem: pem)
                    guard key.bits == 2048 else { throw KeyRingError.unreadable(path, "expected an RSA-2048 key, found \(key.bits) bits") }
                    keys.append(SigningKey(keyID: keyID, privateKey: key))
                } catch let error as KeyRingError {
                    throw error
                } catch {
                    throw .unreadable(path, "\(error)")
                }
            }
        }
        while keys.count < count {
            keys.append(try generate(random: random))
        }
        return try KeyRing(keys: keys, activeKeyID: activeKeyID)
    }

    /// A fresh RSA-2048 key with a random 10-character id.
    public static func generate(random: RandomSource = .system) throws(KeyRingError) -> SigningKey {
        do {
            return SigningKey(keyID: random.alphanumeric(10), privateKey: try RSAPrivateKey.generate(bits: 2048))
        } catch {
            throw .generationFailed("\(error)")
        }
    }
}

/// Why signing keys could not be loaded.
public enum KeyRingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No keys at all.
    case noKeys
    /// The active key id names no key.
    case unknownKeyID(String)
    /// The keys directory does not exist.
    case directoryMissing(String)
    /// A key file could not be used.
    case unreadable(String, String)
    /// OpenSSL could not generate a key.
    case generationFailed(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .noKeys: "no signing keys"
        case .unknownKeyID(let kid): "active key id \(kid) is not among the signing keys"
        case .directoryMissing(let path): "keys directory \(path) does not exist"
        case .unreadable(let path, let why): "\(path): \(why)"
        case .generationFailed(let why): "key generation failed: \(why)"
        }
    }
}
