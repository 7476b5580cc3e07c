internal import Foundation
internal import Health
internal import PostgresStore
internal import SQLiteStore

/// The `wearhouse` command line: global options, subcommand dispatch, help and exit codes.
public enum WearhouseCLI {
    public static let version = "0.1.0"

    /// Every subcommand, in the order `wearhouse --help` lists them.
    static let commands: [any Command] = [
        RunCommand(),
        PairCommand(),
        SensorsCommand(),
        ForgetCommand(),
        ScanCommand(),
        DemoCommand(),
        DoctorCommand(),
        DecodeCommand(),
        TypesCommand(),
        SamplesCommand(),
        StatsCommand(),
        PriorityCommand(),
        SourcesCommand(),
        ExportCommand(),
        ImportSamplesCommand(),
        DeleteCommand(),
        WebCommand(),
        GrantCommand(),
        RevokeCommand(),
        AppsCommand(),
        StoreCommand(),
        MeCommand(),
        FakeBlueZCommand(),
        PeripheralHostCommand(),
        RecordCommand(),
        ReplayCommand(),
        ImportCommand(),
    ]

    /// Runs one command line (without the program name) and returns the exit code.
    public static func main(_ arguments: [String], console: Console = .standard) async -> ExitCode {
        guard let first = arguments.first else {
            console.err(overview)
            return .usage
        }
        switch first {
        case "-h", "--help":
            console.out(overview)
            return .success
        case "--version", "version":
            let libpq = PostgresLibrary.version ?? "not installed"
            console.out("wearhouse \(version) (SQLite \(SQLiteLibrary.version), libpq \(libpq))\n")
            return .success
        case "__man", "__completion", "__complete":
            return await hidden(first, Array(arguments.dropFirst()), console: console)
        case "help":
            guard arguments.count > 1 else {
                console.out(overview)
                return .success
            }
            guard let command = command(named: arguments[1]) else {
                console.error("unknown command \(echo(arguments[1]))", hint: "See 'wearhouse --help' for the commands.")
                return .usage
            }
            var info = command.info(path: [command.name])
            for word in arguments.dropFirst(2) {
                guard let subcommand = info.subcommands.first(where: { $0.path.last == word }) else {
                    console.error("\(echo(info.name)) has no subcommand \(echo(word))", hint: info.usageHint)
                    return .usage
                }
                info = subcommand
            }
            console.out(info.help + (info.options.contains { $0.name == "store" } ? StoreLocation.helpNote() : ""))
            return .success
        default:
            guard let command = command(named: first) else {
                console.error("unknown command \(echo(first))", hint: "See 'wearhouse --help' for the commands.")
                return .usage
            }
            return await run(command, path: [first], Array(arguments.dropFirst()), console: console)
        }
    }

    /// The declarations of every command and subcommand, in the order `wearhouse --help` lists them: what help is
    /// generated from, and what man pages and shell completions can be.
    public static var commandInfos: [CommandInfo] {
        commands.map { $0.info(path: [$0.name]) }
    }

    /// Runs `command` (reached by `path`) on the words after it: a subcommand when the first word names one.
    static func run(_ command: any Command, path: [String], _ arguments: [String], console: Console) async -> ExitCode {
        if !command.subcommands.isEmpty, let word = arguments.first, !word.hasPrefix("-") {
            guard let subcommand = command.subcommands.first(where: { $0.name == word }) else {
                console.error(
                    "unknown subcommand \(echo(word)) (\(command.subcommands.map(\.name).joined(separator: ", ")))",
                    hint: command.info(path: path).usageHint)
                return .usage
            }
            return await run(subcommand, path: path + [word], Array(arguments.dropFirst()), console: console)
        }
        return await command.execute(arguments, path: path, console: console)
    }

    /// The commands that packaging and the completion scripts run, not listed in the help:
    /// `__man DIR EXAMPLE` writes the man pages (``ManualPages``) into DIR, `__completion bash|zsh|fish` prints a
    /// completion script, `__complete WORDS...` answers one Tab (``ShellCompletion``).
    static func hidden(_ name: String, _ arguments: [String], console: Console) async -> ExitCode {
        switch name {
        case "__man":
            guard arguments.count == 2 else {
                console.error("usage: wearhouse __man DIR EXAMPLE-CONFIGURATION")
                return .usage
            }
            return writeManualPages(into: arguments[0], example: arguments[1], console: console)
        case "__completion":
            guard arguments.count == 1, let shell = ShellCompletion.Shell(rawValue: arguments[0]) else {
                console.error("usage: wearhouse __completion bash|zsh|fish")
                return .usage
            }
            console.out(ShellCompletion.script(for: shell))
            return .success
        default:
            let candidates = await ShellCompletion.candidates(
                for: arguments.isEmpty ? [""] : arguments, commands: commandInfos,
                sensors: ShellCompletion.sensorAddresses)
            console.out(candidates.map { $0 + "\n" }.joined())
            return .success
        }
    }

    private static func writeManualPages(into folder: String, example: String, console: Console) -> ExitCode {
        let text: String
        do {
            text = try String(contentsOfFile: example, encoding: .utf8)
        } catch {
            console.error("cannot read \(echo(example)): \(error.localizedDescription)")
            return .noInput
        }
        // SOURCE_DATE_EPOCH (reproducible builds) dates the pages; without it they carry no date.
        let date = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap(Int64.init).map {
            String(StoreArguments.format(Instant(milliseconds: $0 * 1000), offsetSeconds: 0).prefix(10))
        }
        do {
            let pages = try ManualPages.pages(
                commands: commandInfos, configurationExample: text, date: date ?? "")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for page in pages {
                try Data(page.text.utf8).write(to: URL(fileURLWithPath: folder + "/" + page.name))
            }
            console.out("wrote \(pages.count) man pages into \(folder)\n")
            return .success
        } catch let failure as ManualPages.Failure {
            console.error("\(failure)")
            return .dataError
        } catch {
            console.error("cannot write man pages into \(echo(folder)): \(error.localizedDescription)")
            return .ioError
        }
    }

    /// Ends the process with `code`.
    public static func exit(_ code: ExitCode) -> Never {
        Foundation.exit(code.rawValue)
    }

    static func command(named name: String) -> (any Command)? {
        commands.first { $0.name == name }
    }

    static var overview: String {
        let width = max(commands.map { $0.name.count }.max() ?? 0, "-h, --help".count) + 2
        var lines = [
            "OVERVIEW: wearhouse collects health data from Bluetooth LE sensors into a shared store.",
            "",
            "USAGE: wearhouse <command> [options]",
            "",
            "OPTIONS:",
            "  " + "--version".padding(to: width) + "Show the version.",
            "  " + "-h, --help".padding(to: width) + "Show help information.",
            "",
            "COMMANDS:",
        ]
        lines += commands.map { "  " + $0.name.padding(to: width) + $0.abstract }
        lines += ["", "  See 'wearhouse help <command>' for detailed help."]
        return lines.joined(separator: "\n") + "\n"
    }
}
