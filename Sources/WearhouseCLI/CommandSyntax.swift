/// Everything a command takes after its name, declared once: positionals, options and the rules between them.
/// Parsing fills the command's options struct from these declarations; usage, help (and later man pages and shell
/// completions) are generated from the same declarations (``CommandInfo``).
public struct CommandSyntax<Options: CommandOptions>: Sendable {
    public let positionals: [Positional<Options>]
    public let options: [Option<Options>]
    public let rules: [OptionRule]

    public init(positionals: [Positional<Options>] = [], options: [Option<Options>] = [], rules: [OptionRule] = []) {
        self.positionals = positionals
        self.options = options
        self.rules = rules
    }

    /// What a command line asks for.
    public enum Parsed: Sendable {
        /// `-h` or `--help`: the command's help, whatever else the line says.
        case help
        case options(Options)
    }

    /// Parses `arguments` (the words after the command's name): `--name value`, `--name=value`, `--flag`, positionals,
    /// and `--` before positionals that start with a dash. A value is the next word unless that starts with `--`
    /// (then it needs `--name=value`), so negative numbers are values. Values are checked as their declarations say,
    /// then the required options, the positionals and the rules.
    public func parse(_ arguments: [String]) throws(UsageError) -> Parsed {
        var parsed = Options()
        var words: [String] = []
        var given: [String: Int] = [:]
        var failure: UsageError?
        var wantsHelp = false
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                words += rest
                break
            }
            if argument == "-h" || argument == "--help" {
                wantsHelp = true
                continue
            }
            guard argument.hasPrefix("--") else {
                if argument.hasPrefix("-"), argument != "-", Double(argument) == nil {
                    failure = failure ?? UsageError("unknown option \(echo(argument))")
                } else {
                    words.append(argument)
                }
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let option = options.first(where: { $0.info.name == name }) else {
                failure = failure ?? UsageError("unknown option \(echo("--" + name))")
                continue
            }
            let count = given[name, default: 0] + 1
            given[name] = count
            let value: String
            if option.info.kind == .flag {
                guard inline == nil else {
                    failure = failure ?? UsageError("option '--\(name)' takes no value")
                    continue
                }
                value = ""
            } else if let inline {
                value = inline
            } else if let next = rest.first, !next.hasPrefix("--") {
                value = next
                rest.removeFirst()
            } else {
                failure = failure ?? UsageError("missing value for '--\(name)'")
                continue
            }
            if count > 1, option.info.kind != .flag, !option.info.isRepeatable {
                failure = failure ?? UsageError("option '--\(name)' given twice")
                continue
            }
            do throws(UsageError) {
                try option.apply(&parsed, value)
            } catch {
                failure = failure ?? error
            }
        }
        if wantsHelp { return .help }
        if let failure { throw failure }
        for option in options where option.info.isRequired && given[option.info.name] == nil {
            throw UsageError("missing \(option.info.spelling)")
        }
        try bind(words, into: &parsed)
        let names = Set(given.keys)
        for rule in rules {
            if let violation = rule.violation(given: names) { throw UsageError(violation) }
        }
        return .options(parsed)
    }

    /// Hands the positional words to their declarations in order; a repeating one takes the rest.
    private func bind(_ words: [String], into parsed: inout Options) throws(UsageError) {
        var remaining = words[...]
        for positional in positionals {
            if positional.info.isRepeatable {
                if remaining.isEmpty, positional.info.isRequired {
                    throw UsageError("missing <\(positional.info.name)>")
                }
                for word in remaining { try positional.apply(&parsed, word) }
                remaining = []
            } else if let word = remaining.popFirst() {
                try positional.apply(&parsed, word)
            } else if positional.info.isRequired {
                throw UsageError("missing <\(positional.info.name)>")
            }
        }
        if let extra = remaining.first { throw UsageError("unexpected argument \(echo(extra))") }
    }
}
