/// The files the binary serves, compiled in: `Contract/openapi.json`, the dashboard's page,
/// script and style sheet (`Control/Dashboard/`) and Sign in with Apple JS (`Endpoints/AppleJS/`). Each is a raw string literal in a
/// `PackageResources+NAME.swift` beside this file, written by `scripts/embed-resources` from the
/// file, which stays the one to edit; `EmbeddedResourcesTests` fails while the two differ by a byte.
///
/// The name and members are those SwiftPM's `embedInCode` generated, which this replaces: its
/// byte-array literals cost about 21 s of a cold build's CPU, a string literal of the same bytes
/// about 0.2 s (BENCHMARKS.md "Build times").
enum PackageResources {
    /// A literal's UTF-8 bytes: the file's bytes, since the file is UTF-8 with LF line ends
    /// (`scripts/embed-resources` refuses anything else).
    static func bytes(of text: StaticString) -> [UInt8] {
        text.withUTF8Buffer { Array($0) }
    }
}
