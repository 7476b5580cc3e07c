/// One `wearhouse` subcommand.
public protocol Command: Sendable {
    /// The word after `wearhouse`.
    var name: String { get }
    /// One line for the command list.
    var abstract: String { get }
    /// The usage line after `wearhouse <name>`.
    var usage: String { get }
    /// Paragraphs after OVERVIEW (arguments, examples).
    var discussion: String { get }
    var options: OptionTable { get }
    func run(_ arguments: Arguments, console: Console) async -> ExitCode
}

extension Command {
    public var discussion: String { "" }

    /// The full help text, in the layout of common Swift command-line tools.
    public var help: String {
        var lines = ["OVERVIEW: \(abstract)", "", "USAGE: wearhouse \(name) \(usage)"]
        if !discussion.isEmpty { lines += ["", discussion] }
        lines += ["", "OPTIONS:"] + options.helpLines
        return lines.joined(separator: "\n") + "\n"
    }
}
