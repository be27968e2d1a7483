import JOSE

/// Minimal HTML building for the mock's pages.
enum HTML {
    /// Escapes text for element content and attribute values: `&`, `<`, `>`, `"`, `'` and line
    /// breaks (as `&#10;`, `&#13;`, which read the same), byte by byte (`HTMLBuffer.escape`), so a quote followed by a combining mark, which Swift
    /// counts as one `Character`, is escaped too.
    static func escape(_ text: String) -> String {
        var buffer = HTMLBuffer(capacity: text.utf8.count + 16)
        buffer.text(text)
        return String(decoding: buffer.bytes, as: UTF8.self)
    }

    /// A hidden input.
    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(escape(name))\" value=\"\(escape(value))\">"
    }

    /// `text` as a JavaScript string literal that is safe inside `<script>`: JSON's quoting, with
    /// `<`, `>`, `&` and U+2028/U+2029 as `\u` escapes so no `</script>` can close the element.
    static func scriptString(_ text: String) -> String {
        var out = ""
        for scalar in String(decoding: JSONWriter.compact(.string(text)), as: UTF8.self).unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A whole page with Apple-like plain styling.
    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>
        body{font-family:-apple-system,"Helvetica Neue",Helvetica,Arial,sans-serif;background:#f5f5f7;color:#1d1d1f;margin:0}
        main{max-width:420px;margin:48px auto;background:#fff;border-radius:18px;padding:32px;box-shadow:0 4px 24px rgba(0,0,0,.08)}
        h1{font-size:22px;margin:0 0 8px} p{color:#515154} fieldset{border:0;padding:0;margin:16px 0}
        label{display:block;margin:6px 0} input[type=text]{width:100%;padding:8px;box-sizing:border-box;margin:4px 0}
        button{font-size:16px;padding:10px 18px;border-radius:10px;border:0;margin-right:8px;cursor:pointer}
        button.primary{background:#0071e3;color:#fff} button.secondary{background:#e8e8ed;color:#1d1d1f}
        .error-code{font-family:monospace;color:#bf4800}
        </style>
        </head>
        <body><main>
        \(body)
        </main></body>
        </html>
        """
    }
}
