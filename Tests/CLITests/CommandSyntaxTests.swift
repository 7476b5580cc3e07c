import Foundation
import Synchronization
import Testing
import WearhouseCLI

/// Standard output and error of an in-process ``WearhouseCLI/main(_:console:)``.
private final class CapturedConsole: Sendable {
    private let outText = Mutex("")
    private let errText = Mutex("")

    var console: Console {
        Console(
            out: { text in self.outText.withLock { $0 += text } },
            err: { text in self.errText.withLock { $0 += text } },
            isTerminal: false)
    }

    var out: String { outText.withLock { $0 } }
    var err: String { errText.withLock { $0 } }
}

/// Runs `wearhouse <arguments>` in this process.
private func main(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
    let captured = CapturedConsole()
    let status = await WearhouseCLI.main(arguments, console: captured.console)
    return (status.rawValue, captured.out, captured.err)
}

/// Every command and subcommand, depth first.
private func allCommands(_ infos: [CommandInfo] = WearhouseCLI.commandInfos) -> [CommandInfo] {
    infos.flatMap { [$0] + allCommands($0.subcommands) }
}

/// Whether `text` has `spelling` as a whole word: not followed by more of an option name (`--to` in `--to-trace`).
private func mentions(_ text: String, _ spelling: String) -> Bool {
    var rest = text[...]
    while let range = rest.range(of: spelling) {
        let next = rest[range.upperBound...].first
        if next.map({ !$0.isLetter && !$0.isNumber && $0 != "-" }) ?? true { return true }
        rest = rest[range.upperBound...]
    }
    return false
}

/// The generated usage lines and help of every command, and what the declarations promise.
@Suite struct CommandDeclarationTests {
    @Test func everyDeclaredOptionIsInTheUsageLineAndTheHelp() async throws {
        let commands = allCommands()
        #expect(commands.count == 35)  // 26 commands, 3 of them store's subcommands, 3 priority's and 2 me's
        for command in commands {
            let usage = command.usage
            let help = command.help
            #expect(
                help.hasPrefix("OVERVIEW: \(command.abstract)\n\nUSAGE: wearhouse \(command.name)"), "\(command.name)")
            #expect(help.contains("\nOPTIONS:\n"), "\(command.name)")
            #expect(help.contains("\n  -h, --help "), "\(command.name)")
            for option in command.options {
                #expect(mentions(usage, option.spelling), "\(command.name): \(option.spelling) not in '\(usage)'")
                #expect(mentions(help, "\n  " + option.spelling), "\(command.name): \(option.spelling) not in the help")
                #expect(!option.help.isEmpty, "\(command.name): \(option.spelling) has no help")
            }
            for positional in command.positionals {
                #expect(mentions(usage, "<\(positional.name)>"), "\(command.name): <\(positional.name)> not in usage")
                #expect(
                    help.contains("\n  <\(positional.name)>  "), "\(command.name): <\(positional.name)> not in help")
            }
            for subcommand in command.subcommands {
                let word = try #require(subcommand.path.last)
                #expect(usage.contains(word), "\(command.name): \(word) not in '\(usage)'")
                #expect(help.contains("\n  \(word)  "), "\(command.name): \(word) not in the help")
            }
            let names = command.options.map(\.name)
            #expect(Set(names).count == names.count, "\(command.name) declares an option twice")
            for rule in command.rules {
                for name in rule.options + (rule.when.map { [$0] } ?? []) {
                    #expect(names.contains(name), "\(command.name): a rule names --\(name), which it does not take")
                }
            }
            // What the command line prints is this help, however it is asked for (and, for a command that takes
            // --store, the store it would use).
            let takesStore = command.options.contains { $0.name == "store" }
            for arguments in [["help"] + command.path, command.path + ["--help"], command.path + ["-h"]] {
                let result = await main(arguments)
                #expect(result.status == 0, "\(arguments)")
                #expect(
                    takesStore ? result.out.hasPrefix(help + "\nSTORE: without --store") : result.out == help,
                    "\(arguments)")
            }
        }
    }

    @Test func usageLinesShowRequiredOptionsGroupsAndRepeatingPositionals() throws {
        let commands = Dictionary(uniqueKeysWithValues: allCommands().map { ($0.name, $0) })
        #expect(commands["decode"]?.usage == "<characteristic> <hex>... [--json] [--previous <hex>]")
        #expect(
            commands["store retention"]?.usage == "[--type <type>] [--days <n> | --forever] [--store <url>]")
        #expect(commands["store"]?.usage == "<check|retention|prune>")
        let fake = try #require(commands["fake-bluez"])
        #expect(fake.usage.hasPrefix("(--address <dbus-address> | --bus <system|session>) [--scenario <file>]"))
        #expect(
            try #require(commands["export"]).usage.hasPrefix("--format <csv|ndjson|fhir|sqlite|gpx> [--type <types>]"))
        let scan = try #require(commands["scan"]?.options.first { $0.name == "duration" })
        #expect(scan.kind == .seconds(0.1...3600))
        #expect(scan.defaultValue == "10")
        #expect(commands["samples"]?.options.first { $0.name == "format" }?.kind == .choice(["table", "json", "csv"]))
    }

    /// The review's example: prune takes none of retention's options.
    @Test func pruneWithRetentionOptionsIsAUsageErrorWithTheHint() throws {
        let result = try WearhouseRunner.run(["store", "prune", "--forever", "--days", "3", "--json"])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr == """
                Error: unknown option '--forever'
                Usage: wearhouse store prune [--dry-run | --yes] [--store <url>]
                See 'wearhouse help store prune' for more information.

                """)
        for arguments in [["help", "store", "prune"], ["store", "prune", "--help"]] {
            let help = try WearhouseRunner.run(arguments)
            #expect(help.status == 0)
            #expect(help.stdout.hasPrefix("OVERVIEW: Delete samples older than their type's retention period.\n"))
            #expect(help.stdout.contains("USAGE: wearhouse store prune [--dry-run | --yes] [--store <url>]\n"))
        }
    }

    /// Each case: the command line, the command whose usage the hint shows, the error.
    static let usageErrors: [(arguments: [String], command: String, message: String)] = [
        (
            ["samples", "--type", "heartRate", "--limit", "-1"], "samples",
            "--limit must be a whole number of 0 or more, not '-1'"
        ),
        (
            ["samples", "--type", "heartRate", "--format", "xml"], "samples",
            "--format must be table, json or csv, not 'xml'"
        ),
        (["samples", "--type", "heartRate", "--type", "stepCount"], "samples", "option '--type' given twice"),
        (["samples", "--from", "2025-03-30"], "samples", "missing --type <type>"),
        (["samples", "--type"], "samples", "missing value for '--type'"),
        (
            ["store", "retention", "--type", "heartRate", "--days", "3", "--forever"], "store retention",
            "--days and --forever cannot be used together"
        ),
        (["store", "retention", "--type", "heartRate"], "store retention", "--type needs --days or --forever"),
        (["store", "retention", "--days", "3"], "store retention", "--days needs --type"),
        (["store", "check", "--days", "3"], "store check", "unknown option '--days'"),
        (["store", "compact"], "store", "unknown subcommand 'compact' (check, retention, prune)"),
        (["store"], "store", "give a subcommand: check, retention, prune"),
        (["apps", "--limit", "5"], "apps", "--limit needs --log"),
        (["delete", "--type", "heartRate", "--from", "2025-03-30"], "delete", "--type needs --to"),
        (["delete", "--dry-run"], "delete", "give --id or --type"),
        (["grant", "my.app"], "grant", "give --read or --write"),
        (["types", "extra"], "types", "unexpected argument 'extra'"),
        (["record", "--duration", "5"], "record", "missing --out <file>"),
        (["scan", "--duration=0"], "scan", "--duration must be a number of seconds from 0.1 to 3600, not '0'"),
        // Found by the command itself, after parsing.
        (
            ["stats", "--type", "heartRate", "--interval", "1d", "--from", "2025-03-31", "--to", "2025-03-30"],
            "stats", "--from is after --to"
        ),
        (["decode", "2a99", "00"], "decode", "unknown characteristic '2a99'"),
    ]

    @Test func usageErrorsPrintTheHintAndExit64() async throws {
        let commands = Dictionary(uniqueKeysWithValues: allCommands().map { ($0.name, $0) })
        for (arguments, name, message) in Self.usageErrors {
            let result = await main(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err.hasPrefix("Error: \(message)\n"), "\(arguments): \(result.err)")
            let usage = try #require(commands[name]).usage
            #expect(
                result.err.hasSuffix(
                    "Usage: wearhouse \(name) \(usage)\nSee 'wearhouse help \(name)' for more information.\n"),
                "\(arguments): \(result.err)")
        }
    }
}

/// Options of a made-up command, to parse with.
private struct Settings: CommandOptions {
    enum Mode: String, CaseIterable, Sendable {
        case fast, careful
    }

    var count = 3
    var offset: Int?
    var mode = Mode.fast
    var names: [String]?
    var label: String?
    var wait: Duration?
    var verbose = false
    var files: [String] = []
}

private let syntax = CommandSyntax<Settings>(
    positionals: [.repeating("file", \.files, required: false, help: "Files.")],
    options: [
        .integer("count", in: 1...9, \.count, help: "How many."),
        .integer("offset", in: -10...10, \.offset, help: "Where."),
        .choice("mode", \.mode, help: "How."),
        .list("name", value: "names", \.names, help: "Who."),
        .text("label", value: "text", \.label, help: "What."),
        .seconds("wait", in: 0.5...60, \.wait, help: "How long."),
        .flag("verbose", \.verbose, help: "Say more."),
    ],
    rules: [.exclusive("label", "name")])

private func parse(_ arguments: [String]) throws(UsageError) -> Settings? {
    switch try syntax.parse(arguments) {
    case .help: nil
    case .options(let settings): settings
    }
}

private func failure(_ arguments: [String]) -> String? {
    do throws(UsageError) {
        _ = try parse(arguments)
        return nil
    } catch {
        return error.message
    }
}

/// ``CommandSyntax/parse(_:)`` on its own.
@Suite struct CommandSyntaxParsingTests {
    @Test func defaultsComeFromTheOptionsStruct() throws {
        let settings = try #require(try parse([]))
        #expect(settings.count == 3 && settings.mode == .fast && settings.names == nil && !settings.verbose)
        #expect(syntax.options.map(\.info.defaultValue) == ["3", nil, "fast", nil, nil, nil, nil])
    }

    @Test func rangesAndChoices() throws {
        #expect(try parse(["--count", "9"])?.count == 9)
        #expect(failure(["--count", "10"]) == "--count must be a whole number from 1 to 9, not '10'")
        #expect(failure(["--count", "two"]) == "--count must be a whole number from 1 to 9, not 'two'")
        #expect(try parse(["--mode", "careful"])?.mode == .careful)
        #expect(failure(["--mode", "slow"]) == "--mode must be fast or careful, not 'slow'")
        #expect(try parse(["--wait", "1.25"])?.wait == .milliseconds(1250))
        #expect(failure(["--wait", "0.1"]) == "--wait must be a number of seconds from 0.5 to 60, not '0.1'")
    }

    @Test func listsAddUpAndOtherOptionsAreGivenOnce() throws {
        #expect(try parse(["--name", "ann,bob", "--name", " cy "])?.names == ["ann", "bob", "cy"])
        #expect(failure(["--label", "a", "--label", "b"]) == "option '--label' given twice")
        #expect(try parse(["--verbose", "--verbose"])?.verbose == true)
        #expect(failure(["--label", "a", "--name", "b"]) == "--label and --name cannot be used together")
    }

    @Test func inlineValues() throws {
        #expect(try parse(["--label=a=b"])?.label == "a=b")
        #expect(try parse(["--label="])?.label == "")
        #expect(try parse(["--label=--verbose"])?.label == "--verbose")
        #expect(failure(["--verbose=yes"]) == "option '--verbose' takes no value")
    }

    @Test func negativeNumbersAreValuesAndPositionals() throws {
        #expect(try parse(["--offset", "-5"])?.offset == -5)
        #expect(failure(["--offset", "-11"]) == "--offset must be a whole number from -10 to 10, not '-11'")
        #expect(try parse(["--label", "-"])?.label == "-")
        #expect(try parse(["-5", "-", "a"])?.files == ["-5", "-", "a"])
        #expect(failure(["-x"]) == "unknown option '-x'")
    }

    @Test func doubleDashEndsTheOptions() throws {
        let settings = try #require(try parse(["--verbose", "--", "--count", "-x", "--help"]))
        #expect(settings.verbose && settings.count == 3)
        #expect(settings.files == ["--count", "-x", "--help"])
    }

    @Test func aValueIsNotTakenFromTheNextOption() {
        #expect(failure(["--label", "--verbose"]) == "missing value for '--label'")
        #expect(failure(["--label"]) == "missing value for '--label'")
        #expect(failure(["--label", "--"]) == "missing value for '--label'")
        #expect(failure(["--colour", "red"]) == "unknown option '--colour'")
    }

    @Test func helpWinsOverEverythingElse() throws {
        #expect(try parse(["--colour", "--count", "0", "-h"]) == nil)
        #expect(try parse(["--help", "--label"]) == nil)
    }
}
