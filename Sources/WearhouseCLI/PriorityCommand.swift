import GATT
import Health
import StoreEngine

/// `wearhouse priority show|set|reset`: which sources count first when several count the same steps
/// (`docs/store-semantics.md`, "The merge of cumulative types").
struct PriorityCommand: Command {
    let name = "priority"
    let abstract = "Show or set which sources win the merge of cumulative types."
    var discussion: String {
        """
        When a phone, a watch and a footpod count the same steps, 'stats' adds each stretch of time once: the
        source ranked highest there wins it. A list names sources, highest first: SOURCE (any of its devices),
        SOURCE[DEVICE] (one device, by the key 'sensors' and 'stats --by-source' show) or SOURCE[] (its samples
        without a device). Sources not in the list fill the gaps the listed ones leave (--unranked gapFill), or
        are left out (--unranked exclude). A type without a list of its own uses the default list. Samples are
        never changed: only what 'stats' and the apps' statistics add up.

        Examples:
          wearhouse priority set stepCount com.example.watch,wearhouse
          wearhouse priority set default wearhouse[F0:13:C3:7A:2B:01],wearhouse --unranked exclude
          wearhouse priority reset stepCount
        """
    }
    let syntax = CommandSyntax<NoOptions>()
    let subcommands: [any Command] = [PriorityShowCommand(), PrioritySetCommand(), PriorityResetCommand()]

    func run(_ options: NoOptions, console: Console) async -> ExitCode {
        console.error("give a subcommand: \(subcommands.map(\.name).joined(separator: ", "))")
        return .usage
    }
}

/// What a priority is set on: a cumulative type, or the default for every type without its own.
enum PriorityTarget: Hashable, Sendable {
    case type(HealthType)
    case defaults

    static func parse(_ text: String) throws(UsageError) -> PriorityTarget {
        if text == "default" { return .defaults }
        let type = try StoreOptions.healthType(text)
        guard type.aggregation == .cumulative else {
            throw UsageError(
                "\(type.identifier) is \(type.aggregation.rawValue): every source of it counts, it is never merged; "
                    + "priorities rank the sources of cumulative types ("
                    + HealthTypeCatalog.all.filter { $0.aggregation == .cumulative }.map(\.identifier).joined(
                        separator: ", ") + ")")
        }
        return .type(type)
    }

    var healthType: HealthType? {
        if case .type(let type) = self { return type }
        return nil
    }
}

/// `wearhouse priority show`: every list the store holds.
struct PriorityShowCommand: Command {
    let name = "show"
    let abstract = "List the priority of each type that has one, and the default."

    struct Options: CommandOptions {
        var json = false
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .flag("json", \.json, help: "Print one JSON object: type (or \"default\") to its list and policy."),
        StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: true, console: console) { store in
            let stored = try await store.priorities().sorted { lhs, rhs in
                (lhs.key == defaultPriorityKey ? "" : lhs.key) < (rhs.key == defaultPriorityKey ? "" : rhs.key)
            }
            let name = { (key: String) in key == defaultPriorityKey ? "default" : key }
            if options.json {
                console.out(
                    FieldValue.object(
                        stored.map { key, priority in
                            Field(
                                name(key),
                                .object([
                                    Field("order", .list(priority.order.map { .string(SourcePriority.spelling($0)) })),
                                    Field("unranked", .string(priority.unranked.rawValue)),
                                ]))
                        }
                    ).json + "\n")
                return
            }
            guard !stored.isEmpty else {
                console.out(
                    "No priorities are set: where sources overlap, the later write wins. "
                        + "See 'wearhouse help priority'.\n")
                return
            }
            console.out(
                table(
                    header: ["TYPE", "PRIORITY (HIGHEST FIRST)", "UNRANKED"],
                    rows: stored.map { key, priority in
                        [
                            name(key), priority.order.map(SourcePriority.spelling).joined(separator: ", "),
                            priority.unranked.rawValue,
                        ]
                    }))
        }
    }
}

/// `wearhouse priority set <type|default> <list> [--unranked gapFill|exclude]`.
struct PrioritySetCommand: Command {
    let name = "set"
    let abstract = "Rank the sources of a type (or the default), highest first."

    struct Options: CommandOptions {
        var target = PriorityTarget.defaults
        var order: [Provenance] = []
        var unranked = CumulativeMerge.UnrankedPolicy.gapFill
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required(
                "type", \.target,
                help: "A cumulative type (stepCount, ...), or 'default' for the types without a list of their own.",
                parse: PriorityTarget.parse),
            .required(
                "sources", \.order,
                help: "Comma-separated, highest first: SOURCE, SOURCE[DEVICE] or SOURCE[] (wearhouse help priority).",
                parse: { text throws(UsageError) in
                    switch SourcePriority.parseEntries(text) {
                    case .success(let entries): return entries
                    case .failure(let error): throw UsageError("<sources>: \(error.description)")
                    }
                }),
        ],
        options: [
            .choice(
                "unranked", \.unranked,
                help: "What the sources not in the list do: fill the gaps the listed ones leave, or count for nothing."),
            StoreOptions.store(\.store),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: false, console: console) { store in
            let priority = SourcePriority(order: options.order, unranked: options.unranked)
            try await store.setPriority(of: options.target.healthType, priority)
            console.out("\(options.target.healthType?.identifier ?? "default"): \(priority)\n")
        }
    }
}

/// `wearhouse priority reset <type|default>`.
struct PriorityResetCommand: Command {
    let name = "reset"
    let abstract = "Remove a type's list (it then uses the default), or the default list."

    struct Options: CommandOptions {
        var target = PriorityTarget.defaults
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required(
                "type", \.target, help: "A cumulative type, or 'default'.", parse: PriorityTarget.parse)
        ],
        options: [StoreOptions.store(\.store)])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: true, console: console) { store in
            try await store.setPriority(of: options.target.healthType, nil)
        }
    }
}
