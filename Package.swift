// swift-tools-version:6.0
import PackageDescription

var targets: [Target] = [
    // OpenSSL 3 (libssl-dev): JOSE's crypto, and MiniHTTP's TLS (its OpenSSL/ folder only).
    // Linked from its static archives (module.modulemap): the shared libcrypto was 3.9 MiB of
    // an idle mock's memory (its relocations, and the code around every function the mock
    // calls); linked in, only what the mock calls is there, 1.8 MiB less in all (BENCHMARKS.md).
    .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
    // System headers Glibc's module does not export (epoll, eventfd, accept4).
    .systemLibrary(name: "CMiniHTTP"),
    // SQLite 3 (libsqlite3-dev): the state file of `serve --state` (AppleIDMock's State/ folder
    // only). Linked from its static archive (module.modulemap): a mock without --state maps
    // and touches none of it (idle memory is a benchmark target).
    .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
    .target(name: "MiniHTTP", dependencies: ["CMiniHTTP", "COpenSSL"]),
    .target(name: "JOSE", dependencies: ["COpenSSL"]),
    // The OpenAPI contract (Contract/openapi.json) and the dashboard's page, script and style
    // sheet are compiled into the binary, with no bundle to ship beside it: as string literals
    // in Embedded/ that scripts/embed-resources writes from these files (SwiftPM's
    // `embedInCode` byte arrays cost about 21 s of a cold build's CPU; BENCHMARKS.md).
    .target(name: "AppleIDMock", dependencies: ["MiniHTTP", "JOSE", "CSQLite"],
            exclude: ["Contract/openapi.json", "Control/Dashboard", "Endpoints/AppleJS"]),
    .executableTarget(name: "appleid-mock", dependencies: ["AppleIDMock", "JOSE", "MiniHTTP"]),
    .target(name: "MiniHTTPTesting", dependencies: ["MiniHTTP"]),
    // The benchmark (BENCHMARKS.md): measures a built appleid-mock against this machine's ceilings.
    .executableTarget(name: "appleid-mock-bench", dependencies: ["MiniHTTP"]),
    .testTarget(name: "MiniHTTPTests", dependencies: ["MiniHTTP", "MiniHTTPTesting"]),
    .testTarget(name: "JOSETests", dependencies: ["JOSE"], resources: [.copy("Fixtures")]),
    .testTarget(name: "AppleIDMockTests", dependencies: ["AppleIDMock", "MiniHTTPTesting", "JOSE"]),
    .testTarget(name: "AppleIDMockCLITests", dependencies: ["appleid-mock", "MiniHTTPTesting", "JOSE"]),
]

// libFuzzer targets (Fuzz/Sources, one `LLVMFuzzerTestOneInput` each; libFuzzer supplies `main`),
// for the parsers that read untrusted bytes and for serving what a scenario file or a state
// archive holds. Part of the package only when `scripts/fuzz` builds them (APPLEID_MOCK_FUZZ=1,
// with the fuzzer and address sanitizers), so they reach the library's package-level API and a
// plain `swift build` never sees them.
if Context.environment["APPLEID_MOCK_FUZZ"] != nil {
    for name in ["HTTPRequestParserFuzzer", "HTTPFormFuzzer", "CompactJWSFuzzer", "ScenarioFuzzer", "ScenarioServeFuzzer",
                 "SMTPSessionFuzzer", "StateImportFuzzer"] {
        targets.append(.executableTarget(name: name, dependencies: ["AppleIDMock", "MiniHTTP", "JOSE"], path: "Fuzz/Sources/\(name)",
                                         swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
    }
}

let package = Package(
    name: "AppleIDMock",
    products: [
        .library(name: "AppleIDMock", targets: ["AppleIDMock"]),
        .library(name: "MiniHTTPTesting", targets: ["MiniHTTPTesting"]),
        .executable(name: "appleid-mock", targets: ["appleid-mock"]),
    ],
    targets: targets
)
