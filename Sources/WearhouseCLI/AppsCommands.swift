import GATT
import Health
import SQLiteStore
import StoreEngine

/// What `grant` and `revoke` take: the app and the types named on the command line.
struct GrantOptions: CommandOptions {
    var app = ""
    var read: [HealthType]?
    var write: [HealthType]?
    var store: String?
}

/// The syntax `grant` and `revoke` share; only the help of the type lists and the rules differ.
private func grantSyntax(read: String, write: String, rules: [OptionRule] = []) -> CommandSyntax<GrantOptions> {
    CommandSyntax(
        positionals: [.required("app", \.app, help: "The app, as 'wearhouse apps' names it.")],
        options: [
            StoreOptions.types("read", \.read, help: read), StoreOptions.types("write", \.write, help: write),
            StoreOptions.store(\.store),
        ],
        rules: rules)
}

/// A change of an app's grants: the types to read and write.
private struct GrantChange {
    var read: [String]
    var write: [String]

    init(_ options: GrantOptions) {
        read = (options.read ?? []).map(\.identifier)
        write = (options.write ?? []).map(\.identifier)
    }

    /// The app's grants after applying `change` to what it has now.
    func apply(to current: [TypeAuthorization], granting: Bool, all: Bool) -> [TypeAuthorization] {
        var byType = Dictionary(uniqueKeysWithValues: current.map { ($0.type, $0) })
        let types = all ? Array(byType.keys) : Array(Set(read + write))
        for type in types {
            var grant = byType[type] ?? TypeAuthorization(type: type, read: false, share: false)
            if all || read.contains(type) { grant.read = granting }
            if all || write.contains(type) { grant.share = granting }
            byType[type] = grant
        }
        return byType.values.sorted { $0.type < $1.type }
    }
}

/// Opens the store `--store` names and runs `body` on it, mapping errors as ``runStoreCommand(_:_:)`` does.
/// Commands that only read or tidy a store pass `mustExist`, so that a mistyped path is an error rather than a
/// new, empty store that checks "ok".
func withStore(
    _ location: String?, mustExist: Bool, console: Console, _ body: (any HealthStoreEngine) async throws -> Void
) async -> ExitCode {
    await runStoreCommand(console) {
        try await body(try StoreLocation.open(store: location, mustExist: mustExist))
        return .success
    }
}

/// `wearhouse grant <app> --read T,... --write T,...`.
struct GrantCommand: Command {
    let name = "grant"
    let abstract = "Let an app read and/or write types."
    let syntax = grantSyntax(
        read: "Types the app may read (all samples, not only its own).", write: "Types the app may write.",
        rules: [.anyOf("read", "write")])

    func run(_ options: GrantOptions, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: false, console: console) { store in
            let change = GrantChange(options)
            let current = try await store.apps().first { $0.app == options.app }?.grants ?? []
            try await store.setAuthorization(app: options.app, change.apply(to: current, granting: true, all: false))
        }
    }
}

/// `wearhouse revoke <app> [--read T,...] [--write T,...]`: without lists, everything.
struct RevokeCommand: Command {
    let name = "revoke"
    let abstract = "Take read and/or write permissions away from an app."
    let syntax = grantSyntax(read: "Types the app may no longer read.", write: "Types the app may no longer write.")

    func run(_ options: GrantOptions, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: false, console: console) { store in
            let change = GrantChange(options)
            let all = change.read.isEmpty && change.write.isEmpty
            let current = try await store.apps().first { $0.app == options.app }?.grants ?? []
            try await store.setAuthorization(app: options.app, change.apply(to: current, granting: false, all: all))
        }
    }
}

/// `wearhouse apps`: every app with what it may read and write, and what it asked for (pending requests);
/// `--log` shows the access log instead.
struct AppsCommand: Command {
    let name = "apps"
    let abstract = "List apps, their permissions and pending requests, or the access log."
    var discussion: String {
        """
        Apps reach the store through the D-Bus API (docs/app-api.md) and are named by the service from their
        credentials: uid<N>:<systemd unit>, uid<N>:<executable or script>, or uid<N>. An app's
        RequestAuthorization shows here as PENDING until you decide with 'wearhouse grant' (what it does not
        grant is denied) or 'wearhouse revoke' (everything denied).
        """
    }

    struct Options: CommandOptions {
        var json = false
        var log = false
        var limit = 50
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        options: [
            .flag("json", \.json, help: "One JSON object per app (or log entry)."),
            .flag("log", \.log, help: "Show the access log, newest first."),
            .integer("limit", in: 1...Int.max, \.limit, help: "How many access-log entries to show."),
            StoreOptions.store(\.store),
        ],
        rules: [.requires("limit", "log")])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: true, console: console) { store in
            if options.log {
                try await showLog(store, options, console: console)
                return
            }
            let apps = try await store.apps()
            if options.json {
                for app in apps {
                    let read = app.grants.filter(\.read).map { FieldValue.string($0.type) }
                    let write = app.grants.filter(\.share).map { FieldValue.string($0.type) }
                    console.out(
                        FieldValue.object([
                            Field("app", .string(app.app)), Field("read", .list(read)), Field("write", .list(write)),
                            Field("pending_read", .list(app.pendingRead.map { .string($0) })),
                            Field("pending_write", .list(app.pendingShare.map { .string($0) })),
                        ])
                        .json + "\n")
                }
                return
            }
            guard !apps.isEmpty else {
                console.out("No apps have permissions or requests.\n")
                return
            }
            let rows = apps.map { (app) -> [String] in
                let pending: [String] =
                    app.pendingRead.map { "read:\($0)" } + app.pendingShare.map { "write:\($0)" }
                let read: String = app.grants.filter(\.read).map(\.type).joined(separator: ",")
                let write: String = app.grants.filter(\.share).map(\.type).joined(separator: ",")
                let asked: String = pending.joined(separator: ",")
                return [app.app, read.nonEmpty ?? "-", write.nonEmpty ?? "-", asked.nonEmpty ?? "-"]
            }
            console.out(table(header: ["APP", "READ", "WRITE", "PENDING"], rows: rows))
        }
    }

    private func showLog(_ store: any HealthStoreEngine, _ options: Options, console: Console) async throws {
        let entries = try await store.accessLog(limit: options.limit)
        if options.json {
            for entry in entries {
                console.out(
                    FieldValue.object([
                        Field("at", .string(StoreArguments.format(entry.at, offsetSeconds: 0))),
                        Field("caller", .string(entry.caller.description)),
                        Field("operation", .string(entry.operation.rawValue)),
                        Field("type", entry.type.map { .string($0) } ?? .null), Field("count", .int(entry.sampleCount)),
                        Field("denied", .bool(entry.denied)),
                    ])
                    .json + "\n")
            }
            return
        }
        let rows = entries.map { entry in
            [
                StoreArguments.format(entry.at, offsetSeconds: 0), entry.caller.description, entry.operation.rawValue,
                entry.type ?? "-", String(entry.sampleCount), entry.denied ? "denied" : "",
            ]
        }
        console.out(table(header: ["AT", "CALLER", "OPERATION", "TYPE", "COUNT", "DENIED"], rows: rows))
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
