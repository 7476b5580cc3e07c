import Foundation
import Health
import SQLiteStore
import StoreEngine

/// `wearhouse delete`: deletes samples by id, or every sample of a type in a range (with the usual filters).
/// Each deletion leaves a tombstone, so syncing apps learn about it.
struct DeleteCommand: Command {
    let name = "delete"
    let abstract = "Delete samples by id, or by type and time range."
    var discussion: String {
        """
        --dry-run counts exactly what the deletion would delete (ids that match nothing are not counted) and
        deletes nothing. Otherwise a terminal is asked to confirm; without one, --yes is needed. A correlation
        (bloodPressure, food) is deleted with its samples, and deleting one of them deletes the correlation; a
        workout is deleted without the samples recorded during it. Each counts as a sample.

        EXAMPLES:
          wearhouse delete --type heartRate --from 2025-03-30T10:00 --to 2025-03-30T11:00 --dry-run
          wearhouse delete --id 0195e2f4-6c1e-7a3b-8c4d-5e6f7a8b9c0d --yes
        """
    }

    struct Options: CommandOptions {
        var ids: [UUID]?
        var type: HealthType?
        var from: StatisticsTime?
        var to: StatisticsTime?
        var timeZone = StoreOptions.utc
        var subjects: [String]?
        var devices: [String]?
        var sources: [String]?
        var dryRun = false
        var yes = false
        var store: String?
    }

    /// The options that narrow a deletion by type.
    static let typeFilters = ["from", "to", "time-zone", "subject", "device", "source"]

    let syntax = CommandSyntax<Options>(
        options: [
            .list("id", value: "uuids", \.ids, help: "Comma-separated sample ids.") { text throws(UsageError) in
                guard let id = UUID(uuidString: text) else { throw UsageError("\(echo(text)) is not a sample id") }
                return id
            },
            StoreOptions.type(\.type, help: "The type."), StoreOptions.time("from", \.from, help: "Range start."),
            StoreOptions.time("to", \.to, help: "Range end (exclusive)."), StoreOptions.timeZone(\.timeZone),
            .list("subject", value: "names", \.subjects, help: "Only these subjects."),
            .list("device", value: "keys", \.devices, help: "Only these devices."),
            .list("source", value: "ids", \.sources, help: "Only these sources."),
            .flag("dry-run", \.dryRun, help: "Say how many samples would be deleted, delete nothing."),
            .flag("yes", \.yes, help: "Delete without asking (needed when standard input is not a terminal)."),
            StoreOptions.store(\.store),
        ],
        rules: [.oneOf("id", "type"), .exclusive("dry-run", "yes"), .requires("type", "from", "to")]
            + DeleteCommand.typeFilters.map { OptionRule.requires($0, "type") })

    /// The ids of every sample, series, correlation or workout of `query.type` that `query` selects, page after page
    /// (a page of workouts ends early when their routes are long); past `maximum`, `nil`.
    static func ids(matching base: SampleQuery, in store: any HealthStoreEngine, maximum: Int = .max) async throws
        -> [UUID]?
    {
        var query = base
        query.limit = 10_000
        var ids: [UUID] = []
        while true {
            let next: SampleCursor?
            if query.type.kind == .workout {
                let read = try await store.workouts(query, as: .owner)
                ids += read.workouts.map(\.id)
                next = read.next
            } else if query.type.kind == .correlation {
                let read = try await store.correlations(query, as: .owner)
                ids += read.correlations.map(\.id)
                next = read.next
            } else if query.type.aggregation == .series {
                let read = try await store.heartbeatSeries(query, as: .owner)
                ids += read.series.map(\.id)
                next = read.next
            } else {
                let read = try await store.samples(query, as: .owner)
                ids += read.samples.map(\.id)
                next = read.next
            }
            guard ids.count <= maximum else { return nil }
            guard let next else { return ids }
            query.cursor = next
        }
    }

    func run(_ options: Options, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            var ids = options.ids ?? []
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            if let type = options.type,
                let from = StoreOptions.instant(options.from, in: options.timeZone),
                let to = StoreOptions.instant(options.to, in: options.timeZone)
            {
                let query = SampleQuery(
                    type: type, from: from, to: to, sources: options.sources, devices: options.devices,
                    subjects: options.subjects)
                ids += try await Self.ids(matching: query, in: store) ?? []
            }
            if options.dryRun {
                console.out("would delete \(try await store.deletionCount(ids, as: .owner)) samples\n")
                return .success
            }
            if !options.yes {
                guard Confirmation.canAsk else {
                    console.error(Confirmation.refusal("delete samples"))
                    return .usage
                }
                let count = try await store.deletionCount(ids, as: .owner)
                guard count > 0, Confirmation.ask("Delete \(count) samples?", console: console) else {
                    console.out("deleted 0 samples\n")
                    return .success
                }
            }
            let deleted = try await store.delete(ids, as: .owner)
            console.out("deleted \(deleted) samples\n")
            return .success
        }
    }
}
