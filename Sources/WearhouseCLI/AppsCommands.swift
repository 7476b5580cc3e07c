import GATT
import Health
import SQLiteStore
import StoreEngine

/// Shared by `grant` and `revoke`: the app and the types named on the command line.
private struct GrantChange {
    var app: String
    var read: [String]
    var write: [String]

    init(_ arguments: Arguments, requireTypes: Bool) throws(StoreArguments.Invalid) {
        guard let app = arguments.positionals.first, arguments.positionals.count == 1 else {
            throw StoreArguments.Invalid(message: "give exactly one <app>")
        }
        self.app = app
        read = StoreArguments.list(arguments, "read") ?? []
        write = StoreArguments.list(arguments, "write") ?? []
        for type in read + write where HealthTypeCatalog.type(type) == nil {
            throw StoreArguments.Invalid(message: "unknown type '\(type)' (see 'wearhouse types')")
        }
        if requireTypes, read.isEmpty, write.isEmpty {
            throw StoreArguments.Invalid(message: "give --read and/or --write with the types to grant")
        }
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

/// Opens the store and runs `body` on it, mapping errors as ``runStoreCommand(_:_:)`` does.
private func withStore(
    _ arguments: Arguments, console: Console, _ body: (any HealthStoreEngine) async throws -> Void
) async -> ExitCode {
    await runStoreCommand(console) {
        try await body(try StoreLocation.open(arguments, mustExist: false))
        return .success
    }
}

/// `wearhouse grant <app> --read T,... --write T,...`.
struct GrantCommand: Command {
    let name = "grant"
    let abstract = "Let an app read and/or write types."
    let usage = "<app> [--read <types>] [--write <types>]"
    let options = OptionTable(valued: [
        StoreLocation.option, ("read", "types", "Types the app may read (all samples, not only its own)."),
        ("write", "types", "Types the app may write."),
    ])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        await withStore(arguments, console: console) { store in
            let change = try GrantChange(arguments, requireTypes: true)
            let current = try await store.apps().first { $0.app == change.app }?.grants ?? []
            try await store.setAuthorization(app: change.app, change.apply(to: current, granting: true, all: false))
        }
    }
}

/// `wearhouse revoke <app> [--read T,...] [--write T,...]`: without lists, everything.
struct RevokeCommand: Command {
    let name = "revoke"
    let abstract = "Take read and/or write permissions away from an app."
    let usage = "<app> [--read <types>] [--write <types>]"
    let options = OptionTable(valued: [
        StoreLocation.option, ("read", "types", "Types the app may no longer read."),
        ("write", "types", "Types the app may no longer write."),
    ])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        await withStore(arguments, console: console) { store in
            let change = try GrantChange(arguments, requireTypes: false)
            let all = change.read.isEmpty && change.write.isEmpty
            let current = try await store.apps().first { $0.app == change.app }?.grants ?? []
            try await store.setAuthorization(app: change.app, change.apply(to: current, granting: false, all: all))
        }
    }
}

/// `wearhouse apps`: every app with what it may read and write, and what it asked for (pending requests);
/// `--log` shows the access log instead.
struct AppsCommand: Command {
    let name = "apps"
    let abstract = "List apps, their permissions and pending requests, or the access log."
    let usage = "[--json] [--log [--limit <n>]]"
    var discussion: String {
        """
        Apps reach the store through the D-Bus API (docs/app-api.md) and are named by the service from their
        credentials: uid<N>:<systemd unit>, uid<N>:<executable or script>, or uid<N>. An app's
        RequestAuthorization shows here as PENDING until you decide with 'wearhouse grant' (what it does not
        grant is denied) or 'wearhouse revoke' (everything denied).
        """
    }
    let options = OptionTable(
        valued: [StoreLocation.option, ("limit", "n", "How many access-log entries to show (default 50).")],
        flags: [("json", "One JSON object per app (or log entry)."), ("log", "Show the access log, newest first.")])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        await withStore(arguments, console: console) { store in
            if arguments.flag("log") {
                try await showLog(store, arguments, console: console)
                return
            }
            let apps = try await store.apps()
            if arguments.flag("json") {
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
            let rows = apps.map { app in
                let pending =
                    app.pendingRead.map { "read:\($0)" } + app.pendingShare.map { "write:\($0)" }
                return [
                    app.app, app.grants.filter(\.read).map(\.type).joined(separator: ",").nonEmpty ?? "-",
                    app.grants.filter(\.share).map(\.type).joined(separator: ",").nonEmpty ?? "-",
                    pending.joined(separator: ",").nonEmpty ?? "-",
                ]
            }
            console.out(table(header: ["APP", "READ", "WRITE", "PENDING"], rows: rows))
        }
    }

    private func showLog(_ store: any HealthStoreEngine, _ arguments: Arguments, console: Console) async throws {
        var limit = 50
        if let text = arguments.option("limit") {
            guard let number = Int(text), number > 0 else {
                throw StoreArguments.Invalid(message: "--limit takes a whole number of entries (1 or more)")
            }
            limit = number
        }
        let entries = try await store.accessLog(limit: limit)
        if arguments.flag("json") {
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

/// `wearhouse store check`: integrity, counts and size.
struct StoreCommand: Command {
    let name = "store"
    let abstract = "Check the store: integrity, sample counts, size."
    let usage = "check [--json] | retention [--type <type> (--days <n> | --forever)] | prune"
    var discussion: String {
        """
        check      integrity check, samples per type, size, retention.
        retention  without options lists how long each type is kept; with --type and --days N (or --forever)
                   sets it. Nothing is deleted until 'prune' runs (the service prunes on its own).
        prune      deletes samples older than their type's retention period.
        """
    }
    let options = OptionTable(
        valued: [
            StoreLocation.option, ("type", "type", "The type whose retention to set."), ("days", "n", "Keep n days."),
        ],
        flags: [("json", "Print one JSON object."), ("forever", "Keep the type forever.")])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        switch arguments.positionals {
        case ["retention"]: return await retention(arguments, console: console)
        case ["prune"]:
            return await withStore(arguments, console: console) { store in
                console.out("pruned \(try await store.prune()) samples\n")
            }
        case ["check"]: break
        default:
            console.error("usage: wearhouse store \(usage)")
            return .usage
        }
        var healthy = true
        let status = await withStore(arguments, console: console) { store in
            let report = try await store.summary()
            healthy = report.integrity == ["ok"]
            if arguments.flag("json") {
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

extension StoreCommand {
    func retention(_ arguments: Arguments, console: Console) async -> ExitCode {
        await withStore(arguments, console: console) { store in
            guard arguments.option("type") != nil else {
                let periods = try await store.retention()
                console.out(
                    periods.isEmpty
                        ? "Every type is kept forever.\n"
                        : table(
                            header: ["TYPE", "DAYS"],
                            rows: periods.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] }))
                return
            }
            let type = try StoreArguments.type(arguments)
            if arguments.flag("forever") {
                try await store.setRetention(of: type, days: nil)
            } else {
                guard let text = arguments.option("days"), let days = Int(text), days > 0 else {
                    throw StoreArguments.Invalid(
                        message: "give --days with a whole number of days (1 or more), or --forever")
                }
                try await store.setRetention(of: type, days: days)
            }
        }
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
