import Foundation
import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// HTTPS on MiniHTTP's event loops: the handshake, verification by a client that trusts only the
/// test CA, and what hostile or broken clients of the TLS port get (a closed connection, never a
/// stuck loop or a leaked descriptor).
final class ServerTLSTests: XCTestCase {
    private func start(timeouts: Double = 5) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration.testing(timeouts: timeouts)
        configuration.tls = try TLSFixture.context()
        return try ServerFixture.start(configuration)
    }

    private func client(ca: String?) -> HTTPClient {
        TLSFixture.client(ca: ca)
    }

    func testHTTPS_AnswersAClientThatTrustsTheCA_AndRefusesOneThatDoesNot() throws {
        let server = try start()
        defer { server.stop() }
        XCTAssertEqual(server.url, "https://127.0.0.1:\(server.port)")
        let response = try client(ca: TLSFixture.files.ca).send("GET", url: server.url + "/hello")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "hi")
        let echoed = try client(ca: TLSFixture.files.ca).send("POST", url: "https://localhost:\(server.port)/echo", body: Array("over tls".utf8))
        XCTAssertEqual(String(decoding: echoed.body, as: UTF8.self), "over tls")
        // The twin: the system store does not know the test CA.
        XCTAssertThrowsError(try client(ca: nil).send("GET", url: server.url + "/hello")) { error in
            XCTAssertTrue("\(error)".contains("certificate verify failed"), "\(error)")
        }
        XCTAssertEqual(ServerFixture.eventually { server.openConnections == 0 }, true)
    }

    func testPlaintextRequest_ToTheTLSPort_GetsAPlain400AndTheConnectionCloses() throws {
        let server = try start()
        defer { server.stop() }
        let expected = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 37\r\nConnection: close\r\n\r\n"
            + "This port speaks HTTPS; use https://\n"
        for request in ["GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n",
                        "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello",
                        "OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n"] {
            let plain = try ServerFixture.client(server)
            try plain.send(request)
            XCTAssertEqual(String(decoding: try plain.readAll(), as: UTF8.self), expected, request)
        }
        // Bytes that are neither TLS nor a request line still fail the handshake silently.
        let garbage = try ServerFixture.client(server)
        try garbage.send(Array(repeating: 0xff, count: 64))
        XCTAssertEqual(try garbage.readAll(), [])
        // The twin: the same request over TLS is answered, and the server still serves.
        XCTAssertEqual(try client(ca: TLSFixture.files.ca).send("GET", url: server.url + "/hello").status, 200)
        XCTAssertEqual(ServerFixture.eventually { server.openConnections == 0 }, true)
    }

    func testTLSClientHello_ToAPlainPort_GetsA400AndTheConnectionCloses() throws {
        let server = try ServerFixture.start()
        defer { server.stop() }
        XCTAssertThrowsError(try client(ca: TLSFixture.files.ca).send("GET", url: "https://127.0.0.1:\(server.port)/hello"))
        let raw = try ServerFixture.client(server)
        try raw.send([0x16, 0x03, 0x01, 0x00, 0x2f, 0x01, 0x00, 0x00, 0x2b, 0x03, 0x03] + Array(repeating: 0x41, count: 40) + Array("\r\n\r\n".utf8))
        XCTAssertEqual(String(decoding: try raw.readAll(), as: UTF8.self), ServerFixture.protocolError(400))
        // The twin: plain HTTP on the same port is served.
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").text, "hi")
    }

    func testStalledHandshake_IsDroppedLikeASlowHead() throws {
        let server = try start(timeouts: 0.3)
        defer { server.stop() }
        let silent = try ServerFixture.client(server)
        XCTAssertTrue(try silent.waitForClose(), "a client that never says hello is closed")
        let partial = try ServerFixture.client(server)
        try partial.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00])  // a ClientHello record header, then nothing
        XCTAssertTrue(try partial.waitForClose())
        XCTAssertEqual(ServerFixture.eventually { server.openConnections == 0 }, true)
        XCTAssertEqual(try client(ca: TLSFixture.files.ca).send("GET", url: server.url + "/hello").status, 200)
    }

    func testTenThousandGarbageAndAbortedHandshakes_LeaveNoConnectionOrDescriptorBehind() throws {
        let warmUp = try start()
        XCTAssertEqual(try client(ca: TLSFixture.files.ca).send("GET", url: warmUp.url + "/hello").status, 200)
        warmUp.stop()
        let before = try ServerFixture.openDescriptorCount()
        let server = try start()
        for index in 0..<10_000 {
            let client = try ServerFixture.client(server)
            switch index % 3 {
            case 0: try client.send([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00])  // truncated record
            case 1: try client.send(Array(repeating: 0xff, count: 64))  // not TLS at all
            default: break  // connect and leave
            }
            client.close()
        }
        XCTAssertEqual(ServerFixture.eventually { server.openConnections == 0 }, true)
        XCTAssertEqual(try client(ca: TLSFixture.files.ca).send("GET", url: server.url + "/hello").status, 200)
        server.stop()
        XCTAssertEqual(try ServerFixture.openDescriptorCount(), before)
    }

    func testContext_RefusesMismatchedKeysAndUnreadableFiles() throws {
        let other = try TestCertificateAuthority(names: ["localhost"])
        let otherKey = TLSFixture.files.directory + "/other-key.pem"
        XCTAssertTrue(FileManager.default.createFile(atPath: otherKey, contents: Data(other.keyPEM.utf8)))
        XCTAssertThrowsError(try TLSServerContext(certificateChain: TLSFixture.files.chain, privateKey: otherKey)) { error in
            XCTAssertTrue((error as? TLSServerContext.Failure)?.message.hasPrefix("\(otherKey) does not match the certificate in \(TLSFixture.files.chain)") == true,
                          "\(error)")
        }
        XCTAssertEqual(assertThrowsFailure { try TLSServerContext(certificateChain: TLSFixture.files.directory + "/missing.pem", privateKey: TLSFixture.files.key) },
                       "certificate file \(TLSFixture.files.directory)/missing.pem: No such file or directory")
        XCTAssertEqual(assertThrowsFailure { try TLSServerContext(certificateChain: TLSFixture.files.directory, privateKey: TLSFixture.files.key) },
                       "certificate file \(TLSFixture.files.directory): not a regular file")
        XCTAssertEqual(assertThrowsFailure { try TLSServerContext(certificateChain: TLSFixture.files.key, privateKey: TLSFixture.files.key) }?
            .hasPrefix("\(TLSFixture.files.key): not a PEM certificate chain"), true)
        // The twin: the matching pair loads.
        XCTAssertNoThrow(try TLSServerContext(certificateChain: TLSFixture.files.chain, privateKey: TLSFixture.files.key))
    }

    func testContext_RefusesChainFiles_WithMoreThanTenCertificatesOrOver64KiB() throws {
        let authority = try TestCertificateAuthority(names: ["localhost"])
        let key = TLSFixture.files.directory + "/chain-key.pem"
        XCTAssertTrue(FileManager.default.createFile(atPath: key, contents: Data(authority.keyPEM.utf8)))
        func chain(_ name: String, _ text: String) -> String {
            let path = TLSFixture.files.directory + "/" + name
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
            return path
        }
        // Leaf + CA is 2 certificates; nine more CA copies make 11, eight make 10.
        let eleven = chain("eleven.pem", authority.chainPEM + String(repeating: authority.caPEM, count: 9))
        XCTAssertEqual(assertThrowsFailure { try TLSServerContext(certificateChain: eleven, privateKey: key) },
                       "certificate file \(eleven): 11 certificates, more than 10 (clients refuse long chains)")
        // Text outside PEM blocks is ignored by OpenSSL: a 2-certificate file padded past 64 KiB.
        let padded = chain("padded.pem", authority.chainPEM + String(repeating: "# padding\n", count: 6600))
        XCTAssertEqual(assertThrowsFailure { try TLSServerContext(certificateChain: padded, privateKey: key) },
                       "certificate file \(padded): over 65536 bytes")
        // The twins: 10 certificates, and 2 with padding under 64 KiB, load.
        let ten = chain("ten.pem", authority.chainPEM + String(repeating: authority.caPEM, count: 8))
        XCTAssertNoThrow(try TLSServerContext(certificateChain: ten, privateKey: key))
        let small = chain("small.pem", authority.chainPEM + String(repeating: "# padding\n", count: 100))
        XCTAssertNoThrow(try TLSServerContext(certificateChain: small, privateKey: key))
    }

    func testTestCertificateAuthority_RefusesNamesThatAreNeitherAddressesNorDNSNames() {
        XCTAssertThrowsError(try TestCertificateAuthority(names: ["bad name"]))
        XCTAssertThrowsError(try TestCertificateAuthority(names: []))
        XCTAssertNoThrow(try TestCertificateAuthority(names: ["mock", "10.0.0.5", "::1", "appleid.apple.com"]))
    }

    private func assertThrowsFailure(_ body: () throws -> TLSServerContext) -> String? {
        do {
            _ = try body()
            XCTFail("expected a failure")
            return nil
        } catch {
            return (error as? TLSServerContext.Failure)?.message
        }
    }
}
