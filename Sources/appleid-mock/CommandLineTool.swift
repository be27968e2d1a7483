import AppleIDMock
import FoundationEssentials
import Glibc

/// `appleid-mock`: dispatches to subcommands and maps failures to exit codes
/// (0 ok, 1 runtime failure, 2 bad input).
enum CommandLineTool {
    static let usage = """
    appleid-mock — a local stand-in for Sign in with Apple's server (appleid.apple.com)

    usage: appleid-mock [serve] [options]          run the server (default)
           appleid-mock client-secret [options]    mint an ES256 client_secret JWT
           appleid-mock keys generate --out DIR    make fresh test keys
           appleid-mock keys [list|rotate|publish|activate KID|retire KID]
                                                   a running mock's signing keys
           appleid-mock clock [show|advance S|set TIME|freeze|unfreeze]
                                                   a running mock's clock
           appleid-mock reset                      a running mock back to its scenario
           appleid-mock faults [list|add JSON|incident NAME|remove ID|clear]
                                                   a running mock's injected faults and Apple's incidents
           appleid-mock health                     exit 0 when a running mock answers
           appleid-mock tls generate --out DIR     a test CA and a certificate for appleid.apple.com
           appleid-mock event TYPE --user U --client ID
                                                   a user revokes, deletes, disables relay mail
           appleid-mock events [--follow]          a running mock's record of what happened, as JSON lines
           appleid-mock requests [--follow|--count] the requests a running mock received, as JSON lines
           appleid-mock mail [list|show ID|clear]  what a running mock's SMTP port (Private Email Relay) received
           appleid-mock state [show|export|import] --state FILE
                                                   a state file (serve --state): look, save, seed
           appleid-mock scenario print             write the built-in scenario
           appleid-mock scenario check FILE        validate a scenario file
           appleid-mock sign-in --user U --client ID   native sign-in against a running mock
           appleid-mock token --user U [--defect NAME]   a genuine or defective id_token from a running mock
           appleid-mock audit --client-id ID --native URL
                                                   attack a backend's Apple login; report what it accepts
           appleid-mock conformance [--against URL|DIR]
                                                   compare the mock with Apple; exit 1 on drift
           appleid-mock notifications listen [--port 9000]
                                                   receive, verify and print the mock's notifications
           appleid-mock version | --version        print the version

    Run any command with --help for its options.
    """

    /// Runs the command line; returns the exit status.
    static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        do {
            guard let command = arguments.first, !command.hasPrefix("-") || ["--help", "-h", "--version"].contains(command) else {
                return try ServeCommand.run(arguments, environment: environment)
            }
            let rest = Array(arguments.dropFirst())
            switch command {
            case "serve": return try ServeCommand.run(rest, environment: environment)
            case "client-secret": return try ClientSecretCommand.run(rest)
            case "keys": return try KeysCommand.run(rest, environment: environment)
            case "clock": return try ClockCommand.run(rest, environment: environment)
            case "reset": return try ResetCommand.run(rest, environment: environment)
            case "faults": return try FaultsCommand.run(rest, environment: environment)
            case "event": return try EventCommand.run(rest, environment: environment)
            case "events": return try EventsCommand.run(rest, environment: environment)
            case "requests": return try RequestsCommand.run(rest, environment: environment)
            case "mail": return try MailCommand.run(rest, environment: environment)
            case "health": return try HealthCommand.run(rest, environment: environment)
            case "tls": return try TLSCommand.run(rest)
            case "scenario": return try ScenarioCommand.run(rest)
            case "state": return try StateCommand.run(rest, environment: environment)
            case "sign-in": return try SignInCommand.run(rest, environment: environment)
            case "token": return try TokenCommand.run(rest, environment: environment)
            case "audit": return try AuditCommand.run(rest, environment: environment)
            case "conformance": return try ConformanceCommand.run(rest)
            case "notifications": return try NotificationsCommand.run(rest, environment: environment)
            case "version", "--version": return try VersionCommand.run(rest)
            case "--help", "-h", "help": throw HelpRequested(usage: usage)
            default: throw UsageError(message: "unknown command \"\(command)\"", usage: usage)
            }
        } catch let help as HelpRequested {
            Output.out(help.usage)
            return 0
        } catch let error as UsageError {
            Output.err("appleid-mock: \(error.message)\n\n\(error.usage)")
            return 2
        } catch let error as CommandFailure {
            Output.err("appleid-mock: \(error.message)")
            return error.status
        } catch {
            Output.err("appleid-mock: \(error)")
            return 1
        }
    }
}

/// A command that ran but failed; carries its exit status.
struct CommandFailure: Error {
    /// What went wrong.
    let message: String
    /// 1 for runtime failures, 2 for bad input.
    let status: Int32
}

/// Writes whole lines to stdout and stderr, unbuffered.
enum Output {
    /// Writes `text` and a newline to stdout; false when stdout no longer takes it (a closed pipe).
    @discardableResult
    static func out(_ text: String) -> Bool {
        write(STDOUT_FILENO, text)
    }

    /// Writes `text` and a newline to stderr.
    static func err(_ text: String) {
        write(STDERR_FILENO, text)
    }

    @discardableResult
    private static func write(_ fd: Int32, _ text: String) -> Bool {
        var bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + sent, $0.count - sent) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
