/// What `ASAuthorizationAppleIDProvider.getCredentialState(forUserID:)` answers on a device.
enum CredentialState: String, Sendable, Equatable {
    /// The user is signed in to the app group.
    case authorized
    /// The user stopped using Sign in with Apple for the app, the app revoked the token, or the
    /// account was deleted.
    case revoked
    /// The user never signed in to the app group (or the identifier is unknown).
    case notFound
    /// The user was moved to another team (apple-behaviour.md §8: native apps see `.transferred`).
    case transferred
}
