import AppleIDMock
import JOSE

/// `appleid-mock mail`: what a running mock's SMTP port (`serve --smtp-port`) received.
enum MailCommand {
    static let usage = """
    usage: appleid-mock mail [list] [--after ID] [--wait SECONDS] [--json]
           appleid-mock mail show ID [--raw]
           appleid-mock mail clear
           [--server URL] [--timeout SECONDS]

    list   one line per message, oldest first: id, each recipient's verdict (forwarded to
           the real address, direct, or refused with the reason), sender and subject; --json
           prints the mailbox's JSON instead; --wait holds until a message after --after comes
    show   one message as JSON (decoded subject, text and HTML); --raw its bytes as received
    clear  forget every message

    \(ControlClient.optionsUsage)
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["after", "wait"]), flags: ["json", "raw"], usage: usage)
        let command = parsed.positionals.first ?? "list"
        if command != "list" && (parsed.options["after"] != nil || parsed.options["wait"] != nil || parsed.flags.contains("json")) {
            throw UsageError(message: "--after, --wait and --json go with list", usage: usage)
        }
        if command != "show" && parsed.flags.contains("raw") { throw UsageError(message: "--raw goes with show", usage: usage) }
        let client = { () throws -> ControlClient in try ControlClient(parsed, environment: environment, usage: usage) }
        switch command {
        case "list":
            try parsed.requirePositionals(parsed.positionals.isEmpty ? 0 : 1, usage: usage)
            let after = try parsed.unsigned("after", usage: usage) ?? 0
            let wait = try parsed.integer("wait", default: 0, range: 0...60, usage: usage)
            let control = try client()
            var text = try control.call("GET", "/__mock/mail?after=\(after)&limit=1000&wait=\(wait)", waiting: Double(wait))
            if parsed.flags.contains("json") {
                Output.out(text)
                return 0
            }
            // Page by `after` until an answer comes back empty: one answer holds at most 1,000
            // messages and 4 MiB of them.
            var printed = 0
            while true {
                let messages = ((try? JSONParser.parse(Array(text.utf8)))?.objectValue?["messages"]?.arrayValue ?? []).compactMap(\.objectValue)
                guard let last = messages.last?["id"]?.intValue else { break }
                for message in messages { Output.out(summary(message)) }
                printed += messages.count
                text = try control.call("GET", "/__mock/mail?after=\(last)&limit=1000")
            }
            if printed == 0 { Output.out("no mail") }
        case "show":
            try parsed.requirePositionals(2, usage: usage)
            let id = parsed.positionals[1]
            guard !id.isEmpty, id.utf8.allSatisfy({ (48...57).contains($0) }), id.utf8.count <= 20 else {
                throw UsageError(message: "show expects a message id (digits), got \"\(id)\"", usage: usage)
            }
            Output.out(try client().call("GET", "/__mock/mail/\(id)" + (parsed.flags.contains("raw") ? "/raw" : "")))
        case "clear":
            try parsed.requirePositionals(1, usage: usage)
            Output.out(try client().call("DELETE", "/__mock/mail"))
        default:
            throw UsageError(message: "unknown mail command \"\(command)\" (expected list, show or clear)", usage: usage)
        }
        return 0
    }

    /// `ID  forwarded a@privaterelay.appleid.com -> bob@example.com; refused …  from SENDER  "SUBJECT"`.
    static func summary(_ message: JSONObject) -> String {
        let recipients = (message["recipients"]?.arrayValue ?? []).compactMap(\.objectValue).map { recipient -> String in
            let address = recipient["address"]?.stringValue ?? "?"
            switch recipient["verdict"]?.stringValue {
            case "forwarded": return "forwarded \(address) -> \(recipient["real_address"]?.stringValue ?? "?")"
            case "refused": return "refused \(address) (\(recipient["reason"]?.stringValue ?? ""))"
            default: return "direct \(address)"
            }
        }
        let sender = message["from"]?.stringValue ?? ""
        var line = "\(message["id"]?.intValue.map(String.init) ?? "?")  \(recipients.joined(separator: "; "))  from <\(sender)>"
        if let subject = message["subject"]?.stringValue { line += "  \"\(subject)\"" }
        return line
    }
}
