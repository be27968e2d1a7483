import JOSE

extension Delivery {
    /// What Sign in with Apple JS's popup posts to `window.opener` (apple-behaviour.md §1.2
    /// "web_message"): the string `JSON.stringify({method: "oauthDone", data})`, where `data` is
    /// `{authorization: {code, id_token?, state?}, user?}` or, on cancel, `{error}`.
    var webMessage: String {
        var data = JSONObject()
        if let error = parameters.first(where: { $0.0 == "error" })?.1 {
            data["error"] = .string(error)
        } else {
            data["authorization"] = .object(JSONObject(parameters.map { ($0.0, .string($0.1)) }))
            if let user { data["user"] = .object(user) }
        }
        let envelope: JSONObject = ["method": "oauthDone", "data": .object(data)]
        return String(decoding: JSONWriter.compact(.object(envelope)), as: UTF8.self)
    }

    /// The `targetOrigin` of the popup's `postMessage`: the registered `redirect_uri`'s origin
    /// (scheme, host and port, RFC 6454 §4), so an opener on any other origin receives nothing.
    var targetOrigin: String {
        let parts = redirectURI.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].hasPrefix("//") else { return redirectURI }
        let scheme = parts[0].lowercased()
        var authority = parts[1].dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let defaultPort = [("https", ":443"), ("http", ":80")].first { $0.0 == scheme }?.1
        if let defaultPort, authority.hasSuffix(defaultPort) { authority = authority.dropLast(defaultPort.count) }
        return scheme + "://" + authority.lowercased()
    }
}
