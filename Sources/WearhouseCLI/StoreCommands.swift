import GATT
import Health
import StoreEngine

/// `wearhouse store check|retention|prune`: the store itself, each subcommand with options of its own.
struct StoreCommand: Command {
    let name = "store"
    let abstract = "Check the store: integrity, sample counts, size."
    let syntax = CommandSyntax<NoOptions>()
    let subcommands: [any Command] = [StoreCheckCommand(), StoreRetentionCommand(), StorePruneCommand()]

    func run(_ options: NoOptions, console: Console) async -> ExitCode {
        console.error("give a subcommand: \(subcommands.map(\.name).joined(separator: ", "))")
        return .usage
    }
}

/// `wearhouse store check`: integrity, counts and size.
struct StoreCheckCommand: Command {
    let name = "check"
    let abstract = "Integrity check, samples per type, size, retention."

    struct Options: CommandOptions {
        var json = false
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .flag("json", \.json, help: "Print one JSON object."), StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        var healthy = true
        let status = await withStore(options.store, mustExist: true, console: console) { store in
            let report = try await store.summary()
            healthy = report.integrity == ["ok"]
            if options.json {
                console.out(
                    FieldValue.object([
                        Field("path", .string(store.location)),
                        Field("integrity", .list(report.integrity.map { .string($0) })),
                        Field("bytes", .int(report.bytes)), Field("schema_version", .int(report.schemaVersion)),
                        Field(
                            "samples",
                            .object(report.counts.sorted { $0.key < $1.key }.map { Field($0.key, .int($0.value)) })),
                        Field("tombstones", .int(report.tombstones)),
                    ]).json + "\n")
                return
            }
            var text = "store      \(store.location)\n"
            text += "integrity  \(report.integrity.joined(separator: "; "))\n"
            text += "size       \(report.bytes) bytes\n"
            text += "schema     version \(report.schemaVersion)\n"
            text +=
                "samples    \(report.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ").nonEmpty ?? "none")\n"
            text += "tombstones \(report.tombstones)\n"
            let retention = try await store.retention()
            text +=
                "retention  \(retention.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value) days" }.joined(separator: ", ").nonEmpty ?? "everything kept")\n"
            console.out(text)
        }
        return status == .success && !healthy ? .dataError : status
    }
}

/// `wearhouse store retention [--type T (--days N | --forever)]`: lists or sets how long each type is kept.
struct StoreRetentionCommand: Command {
    let name = "retention"
    let abstract = "List how long each type is kept, or set it for one type."
    var discussion: String {
        """
        Without options lists how long each type is kept; with --type and --days N (or --forever) sets it. Nothing
        is deleted until 'prune' runs (the service, 'wearhouse run', prunes when it starts and then daily).
        """
    }

    struct Options: CommandOptions {
        var type: HealthType?
        var days: Int?
        var forever = false
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        options: [
            StoreOptions.type(\.type, help: "The type whose retention to set."),
            .integer("days", in: RetentionLimits.days, \.days, help: "Keep n days (at most 36525, 100 years)."),
            .flag("forever", \.forever, help: "Keep the type forever."), StoreOptions.store(\.store),
        ],
        rules: [
            .exclusive("days", "forever"), .requires("type", anyOf: "days", "forever"), .requires("days", "type"),
            .requires("forever", "type"),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: false, console: console) { store in
            guard let type = options.type else {
                let periods = try await store.retention()
                console.out(
                    periods.isEmpty
                        ? "Every type is kept forever.\n"
                        : table(
                            header: ["TYPE", "DAYS"],
                            rows: periods.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] }))
                return
            }
            try await store.setRetention(of: type, days: options.forever ? nil : options.days)
        }
    }
}

/// `wearhouse store prune`: deletes what is past its type's retention.
struct StorePruneCommand: Command {
    let name = "prune"
    let abstract = "Delete samples older than their type's retention period."
    var discussion: String {
        """
        --dry-run counts exactly what pruning now would delete and deletes nothing. Otherwise a terminal is asked
        to confirm; without one, --yes is needed.
        """
    }

    struct Options: CommandOptions {
        var dryRun = false
        var yes = false
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        options: [
            .flag("dry-run", \.dryRun, help: "Say how many samples would be pruned, delete nothing."),
            .flag("yes", \.yes, help: "Prune without asking (needed when standard input is not a terminal)."),
            StoreOptions.store(\.store),
        ], rules: [.exclusive("dry-run", "yes")])

    func run(_ options: Options, console: Console) async -> ExitCode {
        var refused = false
        let status = await withStore(options.store, mustExist: true, console: console) { store in
            if options.dryRun {
                console.out("would prune \(try await store.pruneCount()) samples\n")
                return
            }
            if !options.yes {
                guard Confirmation.canAsk else {
                    console.error(Confirmation.refusal("prune samples"))
                    refused = true
                    return
                }
                let count = try await store.pruneCount()
                guard count > 0, Confirmation.ask("Prune \(count) samples?", console: console) else {
                    console.out("pruned 0 samples\n")
                    return
                }
            }
            console.out("pruned \(try await store.prune()) samples\n")
        }
        return refused ? .usage : status
    }
}
