import Foundation
import GATT
import Health
import StoreEngine

/// `wearhouse sources [--type T]`: who wrote each type (HealthKit's source query), and for cumulative types where
/// each source stands in the merge's priority.
struct SourcesCommand: Command {
    let name = "sources"
    let abstract = "List the sources and devices that wrote each type, and their rank in the merge."
    var discussion: String {
        """
        One line per type and source (with its device): how many samples (series, for heartbeatSeries), the first
        and last time, and for cumulative types the rank 'wearhouse priority' gives it (1 is the highest;
        'gap-fill' or 'excluded' when the list does not name it). Times are shown in --time-zone (default UTC).
        """
    }

    struct Options: CommandOptions {
        var types: [HealthType]?
        var json = false
        var timeZone = StoreOptions.utc
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        StoreOptions.types("type", \.types, help: "Only these types (default: every type)."),
        .flag("json", \.json, help: "Print one JSON object a line."),
        StoreOptions.timeZone(\.timeZone), StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: true, console: console) { store in
            var rows: [[String]] = []
            for type in options.types ?? HealthTypeCatalog.all {
                let summaries = try await store.sources(of: type, as: .owner)
                guard !summaries.isEmpty else { continue }
                let merge: CumulativeMerge? =
                    type.aggregation == .cumulative
                    ? try await store.effectivePriority(of: type).merge : nil
                for summary in summaries {
                    let rank = merge.map { Self.rank(summary.provenance, in: $0) }
                    let first = Self.format(summary.first, in: options.timeZone)
                    let last = Self.format(summary.last, in: options.timeZone)
                    if options.json {
                        var fields = [
                            Field("type", .string(type.identifier)),
                            Field("source", .string(summary.provenance.source)),
                            Field("device", summary.provenance.device.map { .string($0) } ?? .null),
                            Field("device_name", summary.deviceName.map { .string($0) } ?? .null),
                            Field("count", .int(Int64(summary.count))), Field("first", .string(first)),
                            Field("last", .string(last)),
                        ]
                        if let rank { fields.append(Field("rank", .string(rank))) }
                        console.out(FieldValue.object(fields).json + "\n")
                    } else {
                        rows.append([
                            type.identifier, summary.provenance.description, summary.deviceName ?? "",
                            String(summary.count), first, last, rank ?? "",
                        ])
                    }
                }
            }
            guard !options.json else { return }
            console.out(
                rows.isEmpty
                    ? "No samples.\n"
                    : table(
                        header: ["TYPE", "SOURCE[DEVICE]", "DEVICE NAME", "COUNT", "FIRST", "LAST", "RANK"], rows: rows)
            )
        }
    }

    static func format(_ instant: Instant, in zone: TimeZone) -> String {
        let date = Date(timeIntervalSince1970: Double(instant.milliseconds) / 1_000)
        return StoreArguments.format(instant, offsetSeconds: Int32(zone.secondsFromGMT(for: date)))
    }

    /// `1` for the highest, or what the merge does with an unlisted provenance.
    static func rank(_ provenance: Provenance, in merge: CumulativeMerge) -> String {
        guard let rank = merge.rank(of: provenance) else { return merge.unranked == .gapFill ? "gap-fill" : "excluded" }
        return String(merge.priority.count - rank + 1)
    }
}

extension SourcePriority {
    /// The merge this priority makes.
    var merge: CumulativeMerge { CumulativeMerge(priority: order, unranked: unranked) }
}
