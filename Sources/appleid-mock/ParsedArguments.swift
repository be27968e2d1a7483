/// Options, flags and positionals from argv: `--name value`, `--name=value`, `--flag`.
struct ParsedArguments {
    /// Option values by name (without dashes); the last occurrence wins.
    var options: [String: String] = [:]
    /// Every value each option was given, in order (for options that may repeat).
    var repeated: [String: [String]] = [:]
    /// Flags that were present.
    var flags: Set<String> = []
    /// Arguments that are not options.
    var positionals: [String] = []

    /// Parses `arguments` against the options and flags a command accepts.
    init(_ arguments: [String], options known: Set<String>, flags knownFlags: Set<String> = [], usage: String) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { throw HelpRequested(usage: usage) }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                positionals.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "--\(name) takes no value", usage: usage) }
                flags.insert(name)
            } else if known.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(message: "--\(name) needs a value", usage: usage) }
                    options[name] = arguments[index]
                    index += 1
                }
                repeated[name, default: []].append(options[name] ?? "")
            } else {
                throw UsageError(message: "unknown option --\(name)", usage: usage)
            }
        }
    }

    /// An integer option within `range`.
    func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>, usage: String) throws -> Int {
        guard let raw = options[name] else { return fallback }
        guard let value = Int(raw), range.contains(value) else {
            throw UsageError(message: "--\(name) expects an integer from \(range.lowerBound) to \(range.upperBound), got \"\(raw)\"", usage: usage)
        }
        return value
    }

    /// A non-negative integer option that fits `UInt64`, written in digits only (`UInt64("+7")`
    /// would pass, and no user means that); nil when absent.
    func unsigned(_ name: String, usage: String) throws -> UInt64? {
        guard let raw = options[name] else { return nil }
        guard !raw.isEmpty, raw.utf8.allSatisfy({ (48...57).contains($0) }), let value = UInt64(raw) else {
            throw UsageError(message: "--\(name) expects an integer from 0 to \(UInt64.max), got \"\(raw)\"", usage: usage)
        }
        return value
    }

    /// Fails when positionals were given to a command that takes none beyond `allowed`.
    func requirePositionals(_ allowed: Int, usage: String) throws {
        if positionals.count > allowed {
            throw UsageError(message: "unexpected argument \"\(positionals[allowed])\"", usage: usage)
        }
    }
}
