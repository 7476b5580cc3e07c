/// One `wearhouse` command (or a subcommand of one, such as `store prune`).
public protocol Command: Sendable {
    /// The options struct the command line fills.
    associatedtype Options: CommandOptions
    /// The word after `wearhouse` (or after the group's name, for a subcommand).
    var name: String { get }
    /// One line for the command list.
    var abstract: String { get }
    /// Paragraphs after USAGE (details, examples).
    var discussion: String { get }
    /// The positionals, options and rules, declared once: parsing, usage and help come from them.
    var syntax: CommandSyntax<Options> { get }
    /// The commands that the first argument picks (`store check`); for a group, ``run(_:console:)`` runs only when
    /// none is named.
    var subcommands: [any Command] { get }
    /// Runs with the parsed options. Returning ``ExitCode/usage`` (after an `Error: ...` line) adds the usage hint.
    func run(_ options: Options, console: Console) async -> ExitCode
}

extension Command {
    public var discussion: String { "" }
    public var subcommands: [any Command] { [] }

    /// The declarations of this command and its subcommands; `path` is how it is reached (`["store", "prune"]`).
    public func info(path: [String]) -> CommandInfo {
        CommandInfo(
            path: path, abstract: abstract, discussion: discussion, positionals: syntax.positionals.map(\.info),
            options: syntax.options.map(\.info), rules: syntax.rules,
            subcommands: subcommands.map { $0.info(path: path + [$0.name]) })
    }

    /// Parses `arguments` and runs; usage errors print `Error: ...` and the usage hint and exit 64.
    func execute(_ arguments: [String], path: [String], console: Console) async -> ExitCode {
        let parsed: CommandSyntax<Options>.Parsed
        do throws(UsageError) {
            parsed = try syntax.parse(arguments)
        } catch {
            console.error(error.message, hint: info(path: path).usageHint)
            return .usage
        }
        guard case .options(let options) = parsed else {
            let info = info(path: path)
            let store = info.options.contains { $0.name == "store" } ? StoreLocation.helpNote() : ""
            console.out(info.help + store)
            return .success
        }
        let status = await run(options, console: console)
        if status == .usage { console.err(info(path: path).usageHint + "\n") }
        return status
    }
}
