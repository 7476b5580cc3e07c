/// What one command or subcommand takes, as declared (``Command/syntax``): the usage line and the help are generated
/// from it, and so can man pages and shell completions be (``WearhouseCLI/commandInfos`` lists every command).
public struct CommandInfo: Sendable {
    /// The words after `wearhouse`: `["samples"]`, `["store", "prune"]`.
    public let path: [String]
    public let abstract: String
    public let discussion: String
    public let positionals: [PositionalInfo]
    public let options: [OptionInfo]
    public let rules: [OptionRule]
    public let subcommands: [CommandInfo]

    /// `samples`, `store prune`.
    public var name: String { path.joined(separator: " ") }

    /// The usage line after `wearhouse <name>`: the subcommands, positionals, then the options in declaration order
    /// (optional ones in brackets, options that exclude each other joined by `|`).
    public var usage: String { usageElements.joined(separator: " ") }

    /// What a usage error prints after its `Error: ...` line.
    public var usageHint: String {
        "Usage: wearhouse \(name)\(usage.isEmpty ? "" : " " + usage)\n"
            + "See 'wearhouse help \(name)' for more information."
    }

    /// The full help text: OVERVIEW, USAGE, the discussion, ARGUMENTS, OPTIONS and SUBCOMMANDS.
    public var help: String {
        var lines = ["OVERVIEW: \(abstract)", ""]
        lines += wrapped(usageElements, prefix: "USAGE: wearhouse \(name) ")
        if !discussion.isEmpty { lines += ["", discussion] }
        if !positionals.isEmpty {
            lines += ["", "ARGUMENTS:"] + table(positionals.map { ("<\($0.name)>", $0.help) })
        }
        var rows = options.map { ($0.spelling, Self.text(of: $0)) }
        rows.append(("-h, --help", "Show help information."))
        lines += ["", "OPTIONS:"] + table(rows)
        if !subcommands.isEmpty {
            lines += ["", "SUBCOMMANDS:"] + table(subcommands.map { ($0.path.last ?? "", $0.abstract) })
            lines += ["", "  See 'wearhouse help \(name) <subcommand>' for detailed help."]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// An option's help with its default: `How long to scan (default: 10).`
    static func text(of option: OptionInfo) -> String {
        guard let value = option.defaultValue else { return option.help }
        let sentence = option.help.hasSuffix(".") ? String(option.help.dropLast()) : option.help
        return sentence + " (default: \(value))."
    }

    private var usageElements: [String] {
        var elements: [String] = []
        if !subcommands.isEmpty {
            elements.append("<" + subcommands.compactMap(\.path.last).joined(separator: "|") + ">")
        }
        elements += positionals.map(\.spelling)
        let groups = rules.filter { $0.when == nil && ($0.count == .atMostOne || $0.count == .exactlyOne) }
        var shown: Set<String> = []
        for option in options where !shown.contains(option.name) {
            guard let group = groups.first(where: { $0.options.contains(option.name) }) else {
                elements.append(option.isRequired ? option.spelling : "[\(option.spelling)]")
                shown.insert(option.name)
                continue
            }
            let members = options.filter { group.options.contains($0.name) }
            shown.formUnion(members.map(\.name))
            let alternatives = members.map(\.spelling).joined(separator: " | ")
            elements.append(group.count == .exactlyOne ? "(\(alternatives))" : "[\(alternatives)]")
        }
        return elements
    }

    /// Two-column rows (`  name  help`), the help wrapped at ``lineWidth`` under its column.
    private func table(_ rows: [(String, String)]) -> [String] {
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        return rows.flatMap { row in
            wrapped(row.1.split(separator: " ").map(String.init), prefix: "  " + row.0.padding(to: width))
        }
    }

    /// `words` after `prefix`, as many to a line as fit in ``lineWidth``, further lines indented under the first word.
    private func wrapped(_ words: [String], prefix: String) -> [String] {
        let indent = String(repeating: " ", count: prefix.count)
        var lines: [String] = []
        var line = prefix
        var isEmpty = true
        for word in words {
            if !isEmpty, line.count + 1 + word.count > Self.lineWidth {
                lines.append(line)
                line = indent
                isEmpty = true
            }
            line += (isEmpty ? "" : " ") + word
            isEmpty = false
        }
        while line.hasSuffix(" ") { line.removeLast() }
        return lines + [line]
    }

    static let lineWidth = 120
}
