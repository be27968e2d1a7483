/// How `/auth/authorize` hands its answer back (apple-behaviour.md §1.2 "Delivery").
package enum ResponseMode: String, Sendable, CaseIterable {
    /// A 302 to `redirect_uri` with the fields in the query.
    case query
    /// A 302 to `redirect_uri` with the fields in the fragment.
    case fragment
    /// A page whose form POSTs the fields to `redirect_uri`.
    case formPost = "form_post"
    /// Sign in with Apple JS's popup: the page posts `{method: "oauthDone", data}` to
    /// `window.opener`; `redirect_uri` receives nothing (§1.2 "web_message").
    case webMessage = "web_message"

    /// Whether `name` and `email` may be asked for: the answer then carries `user`, which Apple
    /// sends only in a form POST or a popup message (§1.2).
    var carriesUser: Bool { self == .formPost || self == .webMessage }

    /// Whether an id_token may travel this way: never in a query (§1.2 [D]).
    var carriesIDToken: Bool { self != .query }
}
