// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AppleIDMock",
    targets: [
        // System headers Glibc's module does not export (epoll, eventfd, accept4).
        .systemLibrary(name: "CMiniHTTP"),
        .target(name: "MiniHTTP", dependencies: ["CMiniHTTP"]),
        .target(name: "MiniHTTPTesting", dependencies: ["MiniHTTP"]),
        .testTarget(name: "MiniHTTPTests", dependencies: ["MiniHTTP", "MiniHTTPTesting"]),
    ]
)
