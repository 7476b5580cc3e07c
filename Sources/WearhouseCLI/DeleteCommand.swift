import Foundation
import Health
import SQLiteStore

/// `wearhouse delete`: deletes samples by id, or every sample of a type in a range (with the usual filters).
/// Each deletion leaves a tombstone, so syncing apps learn about it.
struct DeleteCommand: Command {
    let name = "delete"
    let abstract = "Delete samples by id, or by type and time range."

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
            StoreOptions.store(\.store),
        ],
        rules: [.oneOf("id", "type"), .requires("type", "from", "to")]
            + DeleteCommand.typeFilters.map { OptionRule.requires($0, "type") })

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
                if query.type.aggregation == .series {
                    ids += try await store.heartbeatSeries(query, as: .owner).series.map(\.id)
                } else {
                    ids += try await store.samples(query, as: .owner).samples.map(\.id)
                }
            }
            if options.dryRun {
                console.out("would delete \(ids.count) samples\n")
                return .success
            }
            let deleted = try await store.delete(ids, as: .owner)
            console.out("deleted \(deleted) samples\n")
            return .success
        }
    }
}
