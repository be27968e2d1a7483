import AppleIDMock
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `appleid-mock sign-in`: a native (iOS) sign-in against a running mock, printing what
/// `ASAuthorizationAppleIDCredential` would give the app.
enum SignInCommand {
    static let usage = """
    usage: appleid-mock sign-in --user USER --client BUNDLE_ID [--server URL] [--scopes "name email"]
                                [--nonce NONCE] [--hide-email | --share-email]

      --user USER        scenario user id (e.g. alice)
      --client ID        the App ID (bundle id), e.g. com.example.app
      --server URL       the running mock (default http://127.0.0.1:8080)   APPLEID_MOCK_SERVER
      --scopes LIST      space-separated, from name and email (default "name email")
      --nonce NONCE      echoed into the identityToken
      --hide-email       choose Hide My Email; --share-email shares the real address
                         (default: the user's setting in the scenario)

    Prints {"authorizationCode", "email", "fullName", "identityToken", "realUserStatus", "user"}.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ["user", "client", "server", "scopes", "nonce"],
                                         flags: ["hide-email", "share-email"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let user = parsed.options["user"] else { throw UsageError(message: "--user is required", usage: usage) }
        guard let client = parsed.options["client"] else { throw UsageError(message: "--client is required", usage: usage) }
        if parsed.flags.contains("hide-email") && parsed.flags.contains("share-email") {
            throw UsageError(message: "--hide-email and --share-email exclude each other", usage: usage)
        }
        let server = parsed.options["server"] ?? environment["APPLEID_MOCK_SERVER"] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: server.hasSuffix("/") ? server + "__mock/sign-in" : server + "/__mock/sign-in"),
              url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw UsageError(message: "--server expects an absolute http(s) URL, got \"\(server)\"", usage: usage)
        }
        var body: [String: Any] = ["user": user, "client_id": client,
                                   "scopes": (parsed.options["scopes"] ?? "name email").split(separator: " ").map(String.init)]
        if let nonce = parsed.options["nonce"] { body["nonce"] = nonce }
        if parsed.flags.contains("hide-email") { body["hide_email"] = true }
        if parsed.flags.contains("share-email") { body["hide_email"] = false }
        var request = URLRequest(url: url, timeoutInterval: 30)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        let (status, data) = try post(request)
        let text = String(decoding: data, as: UTF8.self)
        guard status == 200 else {
            throw CommandFailure(message: "the mock answered \(status): \(text)", status: status == 400 ? 2 : 1)
        }
        Output.out(text)
        return 0
    }

    /// One blocking POST (the CLI's main thread is not async code).
    private static func post(_ request: URLRequest) throws -> (Int, Data) {
        final class Box: @unchecked Sendable {
            var result: Result<(Int, Data), any Error> = .failure(CommandFailure(message: "no answer", status: 1))
        }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                box.result = .failure(CommandFailure(message: "cannot reach \(request.url?.absoluteString ?? ""): \(error.localizedDescription)", status: 1))
            } else {
                box.result = .success(((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
            }
            done.signal()
        }.resume()
        done.wait()
        return try box.result.get()
    }
}
