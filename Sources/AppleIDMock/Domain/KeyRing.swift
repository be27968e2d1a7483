import Dispatch
import FoundationEssentials
import JOSE
import Synchronization

/// The RSA keys the mock starts with (apple-behaviour.md §1.5): loaded from `<kid>.pem` files
/// and generated to make up the count. Immutable: which keys are published and which signs at
/// run time belongs to the state owner (`StateOwner`), which starts from this ring and returns
/// to it on reset.
package struct KeyRing: Sendable {
    /// One signing key with its id.
    package struct SigningKey: Sendable, Equatable {
        /// The `kid`.
        package let keyID: String
        /// The private key.
        package let privateKey: RSAPrivateKey
        /// Its JWK (the half that verifies), compact JSON bytes.
        let jwkBytes: [UInt8]

        /// Wraps a key; computes its JWK once.
        init(keyID: String, privateKey: RSAPrivateKey) {
            self.keyID = keyID
            self.privateKey = privateKey
            self.jwkBytes = JSONWriter.compact(JWK(kid: keyID, publicKey: privateKey.publicKey).json)
        }

        /// The same kid and key pair (the private half gives the other).
        package static func == (lhs: SigningKey, rhs: SigningKey) -> Bool {
            lhs.keyID == rhs.keyID && lhs.jwkBytes == rhs.jwkBytes
        }
    }

    /// The keys in their stored order.
    package let keys: [SigningKey]
    /// The key that signs at start.
    package let activeKey: SigningKey

    /// A ring of `keys` signing with `activeKeyID` (the first key when nil).
    init(keys: [SigningKey], activeKeyID: String? = nil) throws(KeyRingError) {
        guard let first = keys.first else { throw .noKeys }
        let active = activeKeyID ?? first.keyID
        guard let key = keys.first(where: { $0.keyID == active }) else { throw .unknownKeyID(active) }
        self.keys = keys
        self.activeKey = key
    }

    /// Loads `<kid>.pem` files from `directory` (sorted by name, at most `count`), then
    /// generates the rest in memory with Apple-style 10-character ids.
    package static func load(count: Int, directory: String?, activeKeyID: String?, random: RandomSource = .system) throws(KeyRingError) -> KeyRing {
        var keys: [SigningKey] = []
        if let directory {
            guard BoundedFile.isDirectory(directory) else { throw .directoryMissing(directory) }
            let names = keyFileNames(in: directory)
            guard !names.isEmpty else { throw .noKeyFiles(directory) }
            var files: [(path: String, keyID: String, pem: String)] = []
            for name in names.prefix(count) {
                let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
                let keyID = String(name.dropLast(4))
                // The kid comes from the file name and is published as is.
                guard ScenarioRules.isKeyID(keyID) else { throw .unreadable(path, "file name: \(ScenarioRules.keyIDExpectation)") }
                do {
                    files.append((path, keyID, try BoundedFile.text(path, limit: 64 * 1024)))
                } catch {
                    throw .unreadable(path, error.message)
                }
            }
            keys = try parse(files)
        }
        try topUp(&keys, to: count, random: random)
        return try KeyRing(keys: keys, activeKeyID: activeKeyID)
    }

    /// Generates keys until there are `count`: under `--seed` (a seeded `random`), the nth
    /// start-up key and its kid are derived from the seed, so a seeded mock starts with the same
    /// keys in every process; otherwise fresh from OpenSSL.
    private static func topUp(_ keys: inout [SigningKey], to count: Int, random: RandomSource) throws(KeyRingError) {
        while keys.count < count {
            guard let stream = random.derived("start key \(keys.count)") else {
                keys.append(try generate(random: random))
                continue
            }
            var kids = RandomSource(stream: stream.derived("kid"))
            var material = stream.derived("rsa")
            do {
                keys.append(SigningKey(keyID: kids.alphanumeric(10), privateKey: try RSAPrivateKey.generate(bits: 2048, seed: material.bytes(32))))
            } catch {
                throw .generationFailed("\(error)")
            }
        }
    }

    /// The `<kid>.pem` file names in `directory`, sorted (none when it cannot be read).
    static func keyFileNames(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".pem") }.sorted()
    }

    /// The built-in copies of the committed `Keys/signing` keys (`BuiltInKeys.signing`, at most
    /// `count`, same kids and order as the files), then generated keys to make up the count.
    package static func builtIn(count: Int, activeKeyID: String?, random: RandomSource = .system) throws(KeyRingError) -> KeyRing {
        var keys = try parse(BuiltInKeys.signing.prefix(count).map { ("built-in \(Scenario.SigningKeys.defaultDirectory)/\($0.keyID).pem", $0.keyID, $0.pem) })
        try topUp(&keys, to: count, random: random)
        return try KeyRing(keys: keys, activeKeyID: activeKeyID)
    }

    /// Parses and checks each file's key, on every core at once (OpenSSL's decoders and the pair
    /// check are most of a cold start). Files were read in order before this, so an unreadable
    /// file is reported first; of the keys that do not parse, the first in file order is.
    private static func parse(_ files: [(path: String, keyID: String, pem: String)]) throws(KeyRingError) -> [SigningKey] {
        let results = Mutex<[Result<SigningKey, KeyRingError>?]>(Array(repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let file = files[index]
            let result: Result<SigningKey, KeyRingError>
            do {
                let key = try RSAPrivateKey(pem: file.pem)
                result = key.bits == 2048
                    ? .success(SigningKey(keyID: file.keyID, privateKey: key))
                    : .failure(.unreadable(file.path, "expected an RSA-2048 key, found \(key.bits) bits"))
            } catch {
                result = .failure(.unreadable(file.path, "\(error)"))
            }
            results.withLock { $0[index] = result }
        }
        var keys: [SigningKey] = []
        for result in results.withLock({ $0 }) {
            guard let result else { continue }
            keys.append(try result.get())
        }
        return keys
    }

    /// A fresh RSA-2048 key with a random 10-character id like Apple's, or `keyID` when given.
    package static func generate(keyID: String? = nil, random: RandomSource = .system) throws(KeyRingError) -> SigningKey {
        var random = random
        do {
            return SigningKey(keyID: keyID ?? random.alphanumeric(10), privateKey: try RSAPrivateKey.generate(bits: 2048))
        } catch {
            throw .generationFailed("\(error)")
        }
    }
}

