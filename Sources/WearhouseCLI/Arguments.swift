/// A parsed command line for one subcommand: `--name value`, `--name=value`, `--flag`, positionals, and `--`.
public struct Arguments: Equatable, Sendable {
    public var options: [String: String] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []

    /// The value of `--name`, if given.
    public func option(_ name: String) -> String? { options[name] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// A bad command line; exits 64 with the command's usage.
public struct UsageError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// The options one command accepts.
public struct OptionTable: Sendable {
    /// Options that take a value, with their help text and value name.
    public var valued: [(name: String, value: String, help: String)]
    /// Boolean flags with their help text.
    public var flags: [(name: String, help: String)]

    public init(valued: [(name: String, value: String, help: String)] = [], flags: [(name: String, help: String)] = [])
    {
        self.valued = valued
        self.flags = flags
    }

    /// Parses `arguments`; `-h`/`--help` always parse as the `help` flag.
    public func parse(_ arguments: [String]) throws(UsageError) -> Arguments {
        var parsed = Arguments()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                parsed.positionals += rest
                break
            }
            if argument == "-h" || argument == "--help" {
                parsed.flags.insert("help")
                continue
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if argument.hasPrefix("-"), argument != "-", Double(argument) == nil {
                    throw UsageError("unknown option '\(argument)'")
                }
                parsed.positionals.append(argument)
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            if flags.contains(where: { $0.name == name }) {
                guard inline == nil else { throw UsageError("option '--\(name)' takes no value") }
                parsed.flags.insert(name)
            } else if valued.contains(where: { $0.name == name }) {
                guard parsed.options[name] == nil else { throw UsageError("option '--\(name)' given twice") }
                guard let value = inline ?? rest.popFirst() else { throw UsageError("missing value for '--\(name)'") }
                parsed.options[name] = value
            } else {
                throw UsageError("unknown option '--\(name)'")
            }
        }
        return parsed
    }

    /// The OPTIONS section of a help text.
    var helpLines: [String] {
        var rows = valued.map { ("--\($0.name) <\($0.value)>", $0.help) }
        rows += flags.map { ("--\($0.name)", $0.help) }
        rows.append(("-h, --help", "Show help information."))
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { "  " + $0.0.padding(to: width) + $0.1 }
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
