import JOSE
import MiniHTTP

/// The pages `/auth/authorize` shows: consent, Apple's error page, the form_post relay and the
/// web_message popup's last page.
enum AuthorizePages {
    /// Apple's error page: an error code and message, never a redirect (apple-behaviour.md §2.2).
    static func errorPage(_ error: AuthorizeError, status: HTTPStatus) -> HTTPResponse {
        let body = """
        <h1>Sign in with Apple</h1>
        <p>Your request could not be completed because of an error. Please try again later.</p>
        <p class="error-code" id="error-code">\(HTML.escape(error.code))</p>
        <p class="error-message" id="error-message">\(HTML.escape(error.message))</p>
        """
        return htmlResponse(HTML.page(title: "Sign in with Apple", body: body), status: status)
    }

    /// The consent page: pick a scenario user, edit the name, Share or Hide My Email, then
    /// Continue or Cancel. The form posts back to `/auth/authorize` with the request's parameters
    /// and the page's `ticket` (ConsentTickets).
    static func consent(_ request: AuthorizeRequest, users accounts: [UserAccount], ticket: String) -> HTTPResponse {
        let hidden = (request.parameters + [("mock_page", ticket)]).map { HTML.hidden($0.0, $0.1) }.joined(separator: "\n")
        // The first 100 users are offered; any other can be named with mock_user.
        let users = accounts.filter { !$0.deleted }.prefix(100).map(\.user).enumerated().map { index, user in
            """
            <label><input type="radio" name="mock_user" value="\(HTML.escape(user.id))"\(index == 0 ? " checked" : "")> \
            \(HTML.escape(user.givenName)) \(HTML.escape(user.familyName)) \(user.managed ? "(managed, no email)" : "&lt;\(HTML.escape(user.email))&gt;")</label>
            """
        }.joined(separator: "\n")
        var sections = "<fieldset><legend>Apple Account</legend>\n\(users)\n</fieldset>"
        if request.scopes.contains("name") {
            sections += """

            <fieldset><legend>Name</legend>
            <input type="text" name="mock_given_name" placeholder="First name (as in the account)">
            <input type="text" name="mock_family_name" placeholder="Last name (as in the account)">
            </fieldset>
            """
        }
        if request.scopes.contains("email") {
            sections += """

            <fieldset><legend>Email</legend>
            <label><input type="radio" name="mock_email" value="account" checked> As set for this user</label>
            <label><input type="radio" name="mock_email" value="share"> Share My Email</label>
            <label><input type="radio" name="mock_email" value="hide"> Hide My Email</label>
            </fieldset>
            """
        }
        let body = """
        <h1>Sign in with Apple</h1>
        <p>Use your Apple Account to sign in to <strong>\(HTML.escape(request.clientID))</strong>.</p>
        <form method="post" action="/auth/authorize" id="consent">
        \(hidden)
        \(sections)
        <button type="submit" name="mock_action" value="continue" class="primary" id="continue">Continue</button>
        <button type="submit" name="mock_action" value="cancel" class="secondary" id="cancel">Cancel</button>
        </form>
        """ + (request.responseMode == .webMessage ? "\n" + noOpenerGuard(hiding: "consent") : "")
        return htmlResponse(HTML.page(title: "Sign in with Apple", body: body), status: .ok)
    }

    /// Delivers the authorization response: a 302 with query or fragment, or an auto-submitting
    /// form POST with a visible button for browsers without JavaScript (§1.2).
    static func deliver(_ delivery: Delivery) -> HTTPResponse {
        switch delivery.responseMode {
        case .webMessage:
            return htmlResponse(HTML.page(title: "Sign in with Apple", body: popupMessage(delivery)), status: .ok)
        case .formPost:
            let fields = delivery.parameters.map { HTML.hidden($0.0, $0.1) }.joined(separator: "\n")
            let body = """
            <form method="post" action="\(HTML.escape(delivery.redirectURI))" id="response">
            \(fields)
            <noscript><p>JavaScript is off: press Continue to return to the app.</p></noscript>
            <button type="submit" class="primary">Continue</button>
            </form>
            <script>document.getElementById("response").submit()</script>
            """
            return htmlResponse(HTML.page(title: "Sign in with Apple", body: body), status: .ok)
        case .query, .fragment:
            return HTTPResponse(status: .found, headers: ["Location": location(delivery), "Cache-Control": "no-store"])
        }
    }

    /// The popup's last page (§1.2 "web_message"): posts the message to `window.opener` for the
    /// redirect URI's origin only and shows nothing of it; without an opener it posts nothing.
    static func popupMessage(_ delivery: Delivery) -> String {
        """
        <h1>Sign in with Apple</h1>
        <p id="status">Returning to the app…</p>
        <script>
        (function () {
          var message = \(HTML.scriptString(delivery.webMessage));
          var targetOrigin = \(HTML.scriptString(delivery.targetOrigin));
          var status = document.getElementById("status");
          if (!window.opener) { status.id = "lost-opener"; status.textContent = \(HTML.scriptString(lostOpenerText)); return; }
          window.opener.postMessage(message, targetOrigin);
          status.textContent = "You can close this window.";
        })();
        </script>
        """
    }

    /// What a web_message page says when no window opened it.
    static let noOpenerText = "This page only works in the window Sign in with Apple JS opens."

    /// What it says when a page opened it but the link back is gone: Apple's popup then posts
    /// nothing and the page's signIn() never settles (docs/apple-behaviour.md §1.2).
    static let lostOpenerText = "The page that opened this window can no longer be reached (window.opener is null), "
        + "so nothing can be sent back to it and its sign-in will not finish. A page served with "
        + "Cross-Origin-Opener-Policy: same-origin loses its popups this way; same-origin-allow-popups keeps them "
        + "(docs/frontend-tests.md, A lost opener)."

    /// Apple's popup pages refuse to work in a window nothing opened: the element `id` is
    /// replaced by an explanation. A window a page opened (it has a referrer) whose opener was cut
    /// keeps the form, as Apple's does, under a notice of what will happen.
    private static func noOpenerGuard(hiding id: String) -> String {
        """
        <script>
        if (!window.opener) {
          var guarded = document.getElementById("\(id)"), notice = document.createElement("p");
          if (document.referrer) {
            notice.id = "lost-opener";
            notice.textContent = \(HTML.scriptString(lostOpenerText));
            guarded.parentNode.insertBefore(notice, guarded);
          } else {
            notice.id = "no-opener";
            notice.textContent = \(HTML.scriptString(noOpenerText));
            guarded.replaceWith(notice);
          }
        }
        </script>
        """
    }

    /// The redirect target of a query or fragment delivery.
    static func location(_ delivery: Delivery) -> String {
        let encoded = HTTPForm.encode(delivery.parameters)
        let uri = asciiOnly(delivery.redirectURI)
        if delivery.responseMode == .fragment { return uri + "#" + encoded }
        return uri + (uri.contains("?") ? "&" : "?") + encoded
    }

    /// `uri` with every byte of 0x80 and above percent-encoded: several clients refuse non-ASCII
    /// header bytes. The scenario loader refuses such URIs; one built in code may still
    /// hold them.
    static func asciiOnly(_ uri: String) -> String {
        guard !uri.utf8.allSatisfy({ $0 < 0x80 }) else { return uri }
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(uri.utf8.count * 3)
        for byte in uri.utf8 {
            if byte < 0x80 {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Every page of `/auth/authorize` refuses to be framed by any site (framed, a click the
    /// user did not mean would deliver a code), in both the old header and CSP.
    static let pageHeaders: HTTPHeaders = ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
                                           "X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"]

    private static func htmlResponse(_ html: String, status: HTTPStatus) -> HTTPResponse {
        HTTPResponse(status: status, headers: pageHeaders, body: Array(html.utf8))
    }
}
