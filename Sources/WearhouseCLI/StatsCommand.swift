import Foundation
import GATT
import Health
import SQLiteStore

/// `wearhouse stats --type T --interval 1d`: a statistics collection, merged across sources by priority for
/// cumulative types, in calendar buckets of a named time zone.
struct StatsCommand: Command {
    let name = "stats"
    let abstract = "Statistics per interval (sums merged across sources, or avg/min/max)."
    let usage =
        "--type <type> --interval <15m|1h|1d|1w> [--from <time>] [--to <time>] [--statistic <list>] [--by-source] [--time-zone <zone>] [--json]"
    var discussion: String {
        """
        Days and weeks are calendar days and weeks (Monday first) in --time-zone, so a DST day has 23 or 25
        hours; minutes and hours are fixed durations. Cumulative types (stepCount, distanceWalkingRunning,
        activeEnergyBurned) are summed with overlapping sources merged by priority, so two devices counting the
        same walk are not added up; --by-source shows each source unmerged. Discrete types give count, avg, min,
        max and recent. Without --from/--to the last 7 days up to now are shown.

        EXAMPLES:
          wearhouse stats --type heartRate --interval 1d --time-zone Europe/Berlin --statistic avg,min,max
          wearhouse stats --type stepCount --interval 1h --from 2025-03-30 --to 2025-03-31 --by-source
        """
    }
    let options = OptionTable(
        valued: [
            StoreLocation.option, ("type", "type", "The type (see 'wearhouse types')."),
            ("interval", "interval", "Bucket size: 15m, 1h, 1d, 1w (any count)."),
            ("from", "time", "Range start."), ("to", "time", "Range end (exclusive)."),
            ("time-zone", "zone", "IANA zone for calendar buckets and wall times (default UTC)."),
            ("statistic", "list", "Statistics to show: sum, count, avg, min, max, recent (default: the type's)."),
            ("subject", "names", "Only these subjects."), ("device", "keys", "Only these devices."),
            ("source", "ids", "Only these sources."),
        ],
        flags: [
            ("by-source", "Separate results by source and device, unmerged."), ("json", "One JSON object per bucket."),
        ])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            let type = try StoreArguments.type(arguments)
            let zone = try StoreArguments.timeZone(arguments)
            guard let intervalText = arguments.option("interval") else {
                console.error("missing --interval (15m, 1h, 1d, 1w)")
                return .usage
            }
            let interval: StatisticsInterval
            do { interval = try StatisticsInterval(parsing: intervalText) } catch {
                console.error("--interval: \(error)")
                return .usage
            }
            let to = try StoreArguments.instant(arguments, "to", zone: zone) ?? Instant.now
            let from =
                try StoreArguments.instant(arguments, "from", zone: zone) ?? to.adding(milliseconds: -7 * 86_400_000)
            guard from <= to else {
                console.error("--from is after --to")
                return .usage
            }
            let statistics =
                StoreArguments.list(arguments, "statistic")
                ?? (type.aggregation == .cumulative ? ["sum"] : ["count", "avg", "min", "max"])
            let known = ["sum", "count", "avg", "min", "max", "recent"]
            if let unknown = statistics.first(where: { !known.contains($0) }) {
                console.error("unknown statistic '\(unknown)'; known: \(known.joined(separator: ", "))")
                return .usage
            }
            let buckets = try StatisticsBuckets(interval: interval, timeZone: zone).buckets(from: from, to: to)
            let query = StatisticsQuery(
                type: type, buckets: buckets, sources: StoreArguments.list(arguments, "source"),
                devices: StoreArguments.list(arguments, "device"), subjects: StoreArguments.list(arguments, "subject"),
                separateBySource: arguments.flag("by-source"))
            let store = try StoreLocation.open(arguments, mustExist: true)
            let results = try await store.statistics(query, as: .owner)
            if arguments.flag("json") {
                for result in results { console.out(FieldValue.object(Self.fields(result, statistics)).json + "\n") }
            } else {
                console.out(
                    Self.render(
                        results, statistics, byProvenance: arguments.flag("by-source"), unit: type.canonicalUnit))
            }
            return .success
        }
    }

    static func value(_ result: StatisticsResult, _ statistic: String) -> Double? {
        switch statistic {
        case "sum": result.sum ?? result.discrete?.sum
        case "count": result.discrete.map { Double($0.count) }
        case "avg": result.discrete?.average
        case "min": result.discrete?.minimum
        case "max": result.discrete?.maximum
        case "recent": result.discrete?.mostRecent
        default: nil
        }
    }

    static func fields(_ result: StatisticsResult, _ statistics: [String]) -> [Field] {
        var fields = [
            Field(
                "start",
                .string(StoreArguments.format(result.bucket.start, offsetSeconds: result.bucket.startOffsetSeconds))),
            Field(
                "end", .string(StoreArguments.format(result.bucket.end, offsetSeconds: result.bucket.endOffsetSeconds))),
            Field("duration_s", .double(result.bucket.durationSeconds)),
        ]
        if let provenance = result.provenance {
            fields.append(Field("source", .string(provenance.source)))
            fields.append(Field("device", provenance.device.map { .string($0) } ?? .null))
        }
        for statistic in statistics {
            fields.append(Field(statistic, value(result, statistic).map { .double($0) } ?? .null))
        }
        if result.discrete == nil, result.provenance == nil {
            fields.append(Field("sources", .list(result.sources.map { .string($0.description) })))
        }
        return fields
    }

    static func render(_ results: [StatisticsResult], _ statistics: [String], byProvenance: Bool, unit: String)
        -> String
    {
        guard !results.isEmpty else { return "No buckets.\n" }
        var header = ["START"]
        if byProvenance { header.append("SOURCE") }
        header += statistics.map { $0 == "count" ? "COUNT" : "\($0.uppercased()) (\(unit))" }
        let rows = results.map { result in
            var row = [StoreArguments.format(result.bucket.start, offsetSeconds: result.bucket.startOffsetSeconds)]
            if byProvenance { row.append(result.provenance?.description ?? "-") }
            row += statistics.map { statistic in
                value(result, statistic).map { String(format: statistic == "count" ? "%.0f" : "%.2f", $0) } ?? "-"
            }
            return row
        }
        return table(header: header, rows: rows)
    }
}
