import AppleIDMock
import JOSE

/// `appleid-mock faults`: a running mock's injected faults (list, add, incident presets, remove,
/// clear), and the incident presets it knows.
enum FaultsCommand {
    static let usage = """
    usage: appleid-mock faults [list]                  the installed faults and how often each fired
           appleid-mock faults add JSON               install a fault (an object, as in a scenario's faults)
           appleid-mock faults incident NAME [--minutes N]
                                                      install the faults that reproduce one of Apple's incidents
           appleid-mock faults remove ID              remove one fault (f1, f2, …)
           appleid-mock faults clear [--incident NAME]
                                                      remove every fault, or those of one incident
           [--server URL] [--timeout SECONDS] [--ca FILE] [--control-token T]
           appleid-mock faults incidents              the incidents, one a line (works offline)

    \(ControlClient.optionsUsage)

    incident options:

      --minutes N        how long the incident lasts, in minutes of mock time (1 to
                         \(FaultSpec.maxForSeconds / 60)); default: until removed
                         (token-endpoint-outage: 5)

    Faults act on Apple's routes (/auth/*, discovery) and on notification delivery, never on
    /__mock. Each answer is the mock's JSON: the fault(s) with their ids.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["minutes", "incident"]), usage: usage)
        let command = parsed.positionals.first ?? "list"
        if command != "incident" && parsed.options["minutes"] != nil { throw UsageError(message: "--minutes goes with incident", usage: usage) }
        if command != "clear" && parsed.options["incident"] != nil { throw UsageError(message: "--incident goes with clear", usage: usage) }
        let client = { () throws -> ControlClient in try ControlClient(parsed, environment: environment, usage: usage) }
        switch command {
        case "list":
            try parsed.requirePositionals(1, usage: usage)
            Output.out(try client().call("GET", "/__mock/faults"))
        case "incidents":
            try parsed.requirePositionals(1, usage: usage)
            for incident in FaultIncident.allCases { Output.out("\(incident.rawValue)  \(incident.summary)") }
        case "add":
            guard parsed.positionals.count == 2 else { throw UsageError(message: "add needs one JSON object", usage: usage) }
            guard case .object(let fault)? = try? JSONParser.parse(Array(parsed.positionals[1].utf8)) else {
                throw UsageError(message: "add: expected a JSON object, as in a scenario's faults", usage: usage)
            }
            Output.out(try client().call("POST", "/__mock/faults", body: fault))
        case "incident":
            guard parsed.positionals.count == 2 else { throw UsageError(message: "incident needs a NAME", usage: usage) }
            let name = parsed.positionals[1]
            guard FaultIncident(rawValue: name) != nil else {
                throw UsageError(message: "unknown incident \"\(name)\" (expected one of \(FaultIncident.allCases.map(\.rawValue).joined(separator: ", ")))",
                                 usage: usage)
            }
            var body = JSONObject()
            body["incident"] = .string(name)
            if parsed.options["minutes"] != nil {
                body["minutes"] = .int(Int64(try parsed.integer("minutes", default: 0, range: 1...(FaultSpec.maxForSeconds / 60), usage: usage)))
            }
            Output.out(try client().call("POST", "/__mock/faults", body: body))
        case "remove":
            guard parsed.positionals.count == 2 else { throw UsageError(message: "remove needs an ID", usage: usage) }
            let id = parsed.positionals[1]
            guard id.utf8.count <= 16, id.utf8.allSatisfy({ $0 >= 0x21 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "%") }) else {
                throw UsageError(message: "ID: expected a fault id such as f1", usage: usage)
            }
            Output.out(try client().call("DELETE", "/__mock/faults/\(id)"))
        case "clear":
            try parsed.requirePositionals(1, usage: usage)
            var path = "/__mock/faults"
            if let name = parsed.options["incident"] {
                guard FaultIncident(rawValue: name) != nil else {
                    throw UsageError(message: "--incident: expected one of \(FaultIncident.allCases.map(\.rawValue).joined(separator: ", "))", usage: usage)
                }
                path += "?incident=\(name)"
            }
            Output.out(try client().call("DELETE", path))
        default:
            throw UsageError(message: "unknown subcommand \"\(command)\"", usage: usage)
        }
        return 0
    }
}
