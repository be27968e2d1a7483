/// The release this build is: the one place the version is written (`appleid-mock --version`
/// prints it). Not a type named after the module: `AppleIDMock.X` must keep naming the module.
package enum AppleIDMockVersion {
    /// Semantic version, `MAJOR.MINOR.PATCH`; below 1.0 while the CLI and scenario format may change.
    package static let current = "0.2.0"
}
