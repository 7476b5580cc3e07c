import Foundation
import Health
import SQLiteStore

/// `wearhouse delete`: deletes samples by id, or every sample of a type in a range (with the usual filters).
/// Each deletion leaves a tombstone, so syncing apps learn about it.
struct DeleteCommand: Command {
    let name = "delete"
    let abstract = "Delete samples by id, or by type and time range."
    let usage =
        "(--id <uuids> | --type <type> --from <time> --to <time> [--subject ..] [--device ..] [--source ..]) [--dry-run]"
    let options = OptionTable(
        valued: [
            StoreLocation.option, ("id", "uuids", "Comma-separated sample ids."), ("type", "type", "The type."),
            ("from", "time", "Range start."), ("to", "time", "Range end (exclusive)."),
            ("time-zone", "zone", "IANA zone for wall times (default UTC)."),
            ("subject", "names", "Only these subjects."),
            ("device", "keys", "Only these devices."), ("source", "ids", "Only these sources."),
        ],
        flags: [("dry-run", "Say how many samples would be deleted, delete nothing.")])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            var ids: [UUID] = []
            if let list = StoreArguments.list(arguments, "id") {
                for text in list {
                    guard let id = UUID(uuidString: text) else {
                        throw StoreArguments.Invalid(message: "'\(text)' is not a sample id")
                    }
                    ids.append(id)
                }
            }
            let store = try StoreLocation.open(arguments, mustExist: true)
            if arguments.option("type") != nil {
                let zone = try StoreArguments.timeZone(arguments)
                guard let from = try StoreArguments.instant(arguments, "from", zone: zone),
                    let to = try StoreArguments.instant(arguments, "to", zone: zone)
                else { throw StoreArguments.Invalid(message: "deleting by type needs both --from and --to") }
                let query = SampleQuery(
                    type: try StoreArguments.type(arguments), from: from, to: to,
                    sources: StoreArguments.list(arguments, "source"),
                    devices: StoreArguments.list(arguments, "device"),
                    subjects: StoreArguments.list(arguments, "subject"))
                if query.type.aggregation == .series {
                    ids += try await store.heartbeatSeries(query, as: .owner).series.map(\.id)
                } else {
                    ids += try await store.samples(query, as: .owner).samples.map(\.id)
                }
            }
            guard !ids.isEmpty || arguments.option("id") != nil || arguments.option("type") != nil else {
                throw StoreArguments.Invalid(message: "give --id, or --type with --from and --to")
            }
            if arguments.flag("dry-run") {
                console.out("would delete \(ids.count) samples\n")
                return .success
            }
            let deleted = try await store.delete(ids, as: .owner)
            console.out("deleted \(deleted) samples\n")
            return .success
        }
    }
}
