// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for the parsers that read untrusted bytes, and for serving what a scenario
// file describes (ScenarioServeFuzzer) or a state archive holds (StateImportFuzzer). Each target is one file defining
// `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`. Build and run them with `scripts/fuzz`
// (`swift build --sanitize fuzzer --sanitize address`), never with a plain `swift build`.
let fuzzTargets = ["HTTPRequestParserFuzzer", "HTTPFormFuzzer", "CompactJWSFuzzer", "ScenarioFuzzer",
                   "ScenarioServeFuzzer", "SMTPSessionFuzzer", "StateImportFuzzer"]

let package = Package(
    name: "AppleIDMockFuzz",
    dependencies: [.package(name: "AppleIDMock", path: "..")],
    targets: fuzzTargets.map { name in
        .executableTarget(
            name: name,
            // MiniHTTP and JOSE are not products of the root package; they come in with AppleIDMock.
            dependencies: [.product(name: "AppleIDMock", package: "AppleIDMock")],
            // No top-level code and no @main: the entry point is libFuzzer's.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    }
)
