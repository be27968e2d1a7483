import MiniHTTP

/// `POST /auth/usermigrationinfo` (apple-reference.md §8), authorized by `Authorization: Bearer`.
struct MigrationEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        var bearer: String?
        if let header = request.headers["Authorization"], header.lowercasedASCIIPrefix(7) == "bearer " {
            bearer = String(header.dropFirst(7)).trimmingSpaces
        }
        let form = try AppleForm.fields(request, domain.scenario.compatibility)
        return AppleResponse.noStoreJSON(.object(try domain.userMigrationInfo(form, bearer: bearer)))
    }
}

extension String {
    /// The first `count` characters, lower-cased.
    func lowercasedASCIIPrefix(_ count: Int) -> String {
        String(prefix(count)).lowercased()
    }

    /// Without leading and trailing spaces.
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
