import COpenSSL
import Glibc

/// A throwaway certificate authority for test TLS: a CA certificate and one server certificate
/// it issued for the given DNS names and IP addresses, with their P-256 keys, as PEM. For a
/// mock that must be trusted by a client told only "this CA" — never for anything real.
public struct TestCertificateAuthority: Sendable {
    /// Why the certificates could not be made.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What went wrong.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// The CA certificate (PEM): what clients trust.
    public let caPEM: String
    /// The server certificate followed by the CA certificate (PEM): what the server presents.
    public let chainPEM: String
    /// The server's private key (PKCS#8 PEM, unencrypted).
    public let keyPEM: String

    /// Issues a CA named `caName` and a server certificate for `names` (each an IPv4 or IPv6
    /// literal or a DNS name), valid from five minutes ago for `days` days.
    public init(names: [String], caName: String = "AppleIDMock test CA", days: Int = 825) throws(Failure) {
        guard !names.isEmpty else { throw Failure(message: "no names for the certificate") }
        guard (1...3650).contains(days) else { throw Failure(message: "days must be 1 to 3650") }
        var alternatives: [String] = []
        for name in names {
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1 {
                alternatives.append("IP:\(name)")
            } else if Self.isDNSName(name) {
                alternatives.append("DNS:\(name)")
            } else {
                throw Failure(message: "\"\(name)\" is neither an IP address nor a DNS name")
            }
        }
        guard let caKey = shim_generate_p256(), let serverKey = shim_generate_p256() else { throw Failure(message: "cannot generate a P-256 key") }
        defer {
            EVP_PKEY_free(caKey)
            EVP_PKEY_free(serverKey)
        }
        let ca = try Self.certificate(subject: caName, key: caKey, issuer: nil, issuerKey: caKey, days: days, extensions: [
            (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
            (NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"),
            (NID_subject_key_identifier, "hash"),
        ])
        defer { X509_free(ca) }
        let server = try Self.certificate(subject: names[0], key: serverKey, issuer: ca, issuerKey: caKey, days: days, extensions: [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_alt_name, alternatives.joined(separator: ",")),
            (NID_authority_key_identifier, "keyid"),
        ])
        defer { X509_free(server) }
        caPEM = try Self.pem { PEM_write_bio_X509($0, ca) }
        chainPEM = try Self.pem { PEM_write_bio_X509($0, server) } + caPEM
        keyPEM = try Self.pem { PEM_write_bio_PrivateKey($0, serverKey, nil, nil, 0, nil, nil) }
    }

    private static func isDNSName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 253 && !labels.isEmpty && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7a).contains($0 | 0x20) || $0 == 0x2d || $0 == 0x2a }
        }
    }

    private static func certificate(subject: String, key: OpaquePointer, issuer: OpaquePointer?, issuerKey: OpaquePointer, days: Int,
                                    extensions: [(Int32, String)]) throws(Failure) -> OpaquePointer {
        guard let certificate = X509_new() else { throw Failure(message: "X509_new failed") }
        var serial = [UInt8](repeating: 0, count: 16)
        let made: Bool = serial.withUnsafeMutableBufferPointer { buffer in
            guard RAND_bytes(buffer.baseAddress, Int32(buffer.count)) == 1 else { return false }
            buffer[0] &= 0x7f
            guard let number = BN_bin2bn(buffer.baseAddress, Int32(buffer.count), nil) else { return false }
            defer { BN_free(number) }
            return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
        }
        let name = X509_get_subject_name(certificate)
        guard made, X509_set_version(certificate, 2) == 1,
              X509_gmtime_adj(X509_getm_notBefore(certificate), -300) != nil,
              X509_gmtime_adj(X509_getm_notAfter(certificate), days * 86_400) != nil,
              X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, subject, -1, -1, 0) == 1,
              X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0) } ?? name) == 1,
              X509_set_pubkey(certificate, key) == 1 else {
            X509_free(certificate)
            throw Failure(message: TLSServerContext.drainErrors("cannot fill the certificate for \(subject)"))
        }
        for (nid, value) in extensions where shim_add_extension(issuer ?? certificate, certificate, nid, value) != 1 {
            X509_free(certificate)
            throw Failure(message: TLSServerContext.drainErrors("cannot add \(value) to the certificate"))
        }
        guard X509_sign(certificate, issuerKey, EVP_sha256()) > 0 else {
            X509_free(certificate)
            throw Failure(message: TLSServerContext.drainErrors("cannot sign the certificate for \(subject)"))
        }
        return certificate
    }

    /// What `write` puts into a memory BIO, as text.
    private static func pem(_ write: (OpaquePointer) -> Int32) throws(Failure) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw Failure(message: "BIO_new failed") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw Failure(message: TLSServerContext.drainErrors("cannot write PEM")) }
        var data: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { throw Failure(message: "empty PEM") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}
