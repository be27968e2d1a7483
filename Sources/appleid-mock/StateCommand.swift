import AppleIDMock
import FoundationEssentials

/// `appleid-mock state show|export|import`: a state file (`serve --state`) looked at, saved,
/// and made from a saved one.
enum StateCommand {
    static let usage = """
    usage: appleid-mock state show --state FILE
           appleid-mock state export [OUT] --state FILE
           appleid-mock state import SAVED --state FILE

      show      what FILE holds: clock, users, consents, codes, keys, events, notifications
      export    FILE as JSON (to OUT, else stdout): the scenario, the beginning (MAC secret,
                clock, keys with their private halves), every kept event, the seeded
                stream's position and the notification log. Readable and editable; test-only
                secrets included
      import    make FILE, which must not exist, from SAVED (an export, maybe edited);
                every field is checked first and an error names the JSON path at fault.
                Then `appleid-mock serve --state FILE` starts where SAVED left off.

      --state FILE   the state file                                     APPLEID_MOCK_STATE

    A running mock holds its file: stop it first (the command says so and exits 2).
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        if let first = arguments.first, first == "--help" || first == "-h" || first == "help" { throw HelpRequested(usage: usage) }
        guard let action = arguments.first else { throw UsageError(message: "missing state command (show, export or import)", usage: usage) }
        var parsed = try ParsedArguments(Array(arguments.dropFirst()), options: ["state"], usage: usage)
        if parsed.options["state"] == nil, let value = environment["APPLEID_MOCK_STATE"], !value.isEmpty { parsed.options["state"] = value }
        guard let path = parsed.options["state"], !path.isEmpty else { throw UsageError(message: "--state FILE is required", usage: usage) }
        do {
            switch action {
            case "show":
                try parsed.requirePositionals(0, usage: usage)
                Output.out(try StateArchive.show(path: path))
            case "export":
                guard parsed.positionals.count <= 1 else { throw UsageError(message: "export takes at most one OUT file", usage: usage) }
                let json = try StateArchive.export(path: path)
                if let out = parsed.positionals.first {
                    guard FileManager.default.createFile(atPath: out, contents: Data((json + "\n").utf8)) else {
                        throw CommandFailure(message: "cannot write \(out)", status: 1)
                    }
                } else {
                    Output.out(json)
                }
            case "import":
                guard parsed.positionals.count == 1, let saved = parsed.positionals.first else {
                    throw UsageError(message: "import takes the SAVED file", usage: usage)
                }
                let bytes: [UInt8]
                do {
                    bytes = try BoundedFile.read(saved, limit: 256 * 1024 * 1024)
                } catch {
                    throw CommandFailure(message: "\(saved): \(error.message)", status: 2)
                }
                let events = try StateArchive.importing(bytes, into: path)
                Output.out("made \(path) from \(saved): \(events) events")
            default:
                throw UsageError(message: "unknown state command \"\(action)\"", usage: usage)
            }
        } catch let failure as StateArchive.Failure {
            throw CommandFailure(message: failure.description, status: 2)
        }
        return 0
    }
}
