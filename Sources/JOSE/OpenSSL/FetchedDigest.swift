import COpenSSL

/// A digest implementation fetched once (`EVP_MD_fetch`) and kept for the life of the process.
/// An `EVP_MD` is immutable after the fetch and may be shared by every thread.
final class FetchedDigest: @unchecked Sendable {
    /// SHA-256 from the default provider.
    static let sha256 = FetchedDigest(name: "SHA256")

    /// The fetched `EVP_MD`.
    let pointer: OpaquePointer

    private init(name: String) {
        guard let pointer = EVP_MD_fetch(nil, name, nil) else {
            // Only reachable if libcrypto has no default provider, where nothing could be signed.
            fatalError("EVP_MD_fetch(\(name)) failed: \(OpenSSL.drainErrors())")
        }
        self.pointer = pointer
    }
}
