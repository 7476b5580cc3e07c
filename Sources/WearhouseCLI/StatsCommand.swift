import Foundation
import GATT
import Health
import SQLiteStore

/// `wearhouse stats --type T --interval 1d`: a statistics collection, merged across sources by priority for
/// cumulative types, in calendar buckets of a named time zone.
struct StatsCommand: Command {
    let name = "stats"
    let abstract = "Statistics per interval (sums merged across sources, or avg/min/max)."
    var discussion: String {
        """
        Days and weeks are calendar days and weeks (Monday first) in --time-zone, so a DST day has 23 or 25
        hours; minutes and hours are fixed durations. Cumulative types (stepCount, distanceWalkingRunning,
        activeEnergyBurned) are summed with overlapping sources merged by priority, so two devices counting the
        same walk are not added up; --by-source shows each source unmerged. Discrete types give count, avg, min,
        max and recent; heartbeatSeries gives the count of series that start in each bucket. Without --from/--to the last 7 days up to now are shown.

        EXAMPLES:
          wearhouse stats --type heartRate --interval 1d --time-zone Europe/Berlin --statistic avg,min,max
          wearhouse stats --type stepCount --interval 1h --from 2025-03-30 --to 2025-03-31 --by-source
        """
    }

    /// What `--statistic` lists.
    static let statisticNames = ["sum", "count", "avg", "min", "max", "recent"]

    struct Options: CommandOptions {
        /// A placeholder until parsing sets it: `--type` is required.
        var type = HealthType.heartRate
        /// `nil` only until parsing sets it: `--interval` is required.
        var interval: StatisticsInterval?
        var from: StatisticsTime?
        var to: StatisticsTime?
        var timeZone = StoreOptions.utc
        var statistics: [String]?
        var subjects: [String]?
        var devices: [String]?
        var sources: [String]?
        var bySource = false
        var json = false
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        StoreOptions.type(\.type, help: "The type (see 'wearhouse types')."),
        .value(
            "interval", value: "15m|1h|1d|1w", \.interval, required: true,
            help: "Bucket size: minutes, hours, days or weeks (any count)."
        ) { text throws(UsageError) in
            do {
                return try StatisticsInterval(parsing: text)
            } catch {
                throw UsageError("--interval: \(error)")
            }
        },
        StoreOptions.time("from", \.from, help: "Range start."),
        StoreOptions.time("to", \.to, help: "Range end (exclusive)."),
        StoreOptions.timeZone(\.timeZone, help: "IANA zone for calendar buckets and wall times."),
        .list(
            "statistic", value: "list", \.statistics, allowed: StatsCommand.statisticNames,
            help: "Statistics to show: sum, count, avg, min, max, recent (default: the type's)."),
        .list("subject", value: "names", \.subjects, help: "Only these subjects."),
        .list("device", value: "keys", \.devices, help: "Only these devices."),
        .list("source", value: "ids", \.sources, help: "Only these sources."),
        .flag("by-source", \.bySource, help: "Separate results by source and device, unmerged."),
        .flag("json", \.json, help: "One JSON object per bucket."), StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            let type = options.type
            let zone = options.timeZone
            guard let interval = options.interval else { return .software }
            let to = StoreOptions.instant(options.to, in: zone) ?? Instant.now
            let from = StoreOptions.instant(options.from, in: zone) ?? to.adding(milliseconds: -7 * 86_400_000)
            guard from <= to else {
                console.error("--from is after --to")
                return .usage
            }
            if type.kind == .category, options.statistics != nil {
                console.error(
                    "\(type.identifier) is a category: its statistics are the time and count of each value, "
                        + "--statistic does not apply")
                return .usage
            }
            let statistics =
                options.statistics
                ?? (type.aggregation == .cumulative
                    ? ["sum"] : type.aggregation == .series ? ["count"] : ["count", "avg", "min", "max"])
            let buckets = try StatisticsBuckets(interval: interval, timeZone: zone).buckets(from: from, to: to)
            let query = StatisticsQuery(
                type: type, buckets: buckets, sources: options.sources, devices: options.devices,
                subjects: options.subjects, separateBySource: options.bySource)
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            let results =
                type.aggregation == .series
                ? try await Self.seriesCounts(query, in: store) : try await store.statistics(query, as: .owner)
            if type.kind == .category {
                if options.json {
                    for result in results {
                        console.out(FieldValue.object(Self.categoryFields(result, type)).json + "\n")
                    }
                } else {
                    console.out(Self.renderCategories(results, type, byProvenance: options.bySource))
                }
            } else if options.json {
                for result in results { console.out(FieldValue.object(Self.fields(result, statistics)).json + "\n") }
            } else {
                console.out(
                    Self.render(
                        results, statistics, byProvenance: options.bySource, unit: type.canonicalUnit))
            }
            return .success
        }
    }

    /// Heartbeat series per bucket: how many series start in it (other statistics are empty: a series has no
    /// single value). Read page by page, ``SamplesCommand/pageSize`` at a time.
    static func seriesCounts(_ query: StatisticsQuery, in store: any HealthStore) async throws -> [StatisticsResult] {
        guard let first = query.buckets.first, let last = query.buckets.last else { return [] }
        var starts: [Provenance?: [Instant]] = [:]
        var page = SampleQuery(
            type: query.type, from: first.start, to: last.end, strictStart: true, sources: query.sources,
            devices: query.devices, subjects: query.subjects, limit: SamplesCommand.pageSize)
        while true {
            let read = try await store.heartbeatSeries(page, as: .owner)
            for series in read.series where series.start < last.end {
                starts[query.separateBySource ? series.provenance : nil, default: []].append(series.start)
            }
            guard let next = read.next else { break }
            page.cursor = next
        }
        let groups =
            query.separateBySource ? starts.keys.sorted { ($0?.description ?? "") < ($1?.description ?? "") } : [nil]
        var results: [StatisticsResult] = []
        for bucket in query.buckets {
            for provenance in groups {
                let count = (starts[provenance] ?? []).count { $0 >= bucket.start && $0 < bucket.end }
                if query.separateBySource, count == 0 { continue }
                results.append(
                    StatisticsResult(
                        bucket: bucket, provenance: provenance,
                        discrete: DiscreteStatistics.Bucket(
                            start: bucket.start, end: bucket.end, count: count, sum: nil, average: nil, minimum: nil,
                            maximum: nil, mostRecent: nil, mostRecentEnd: nil, timeWeightedAverage: nil)))
            }
        }
        return results
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

    /// What every JSON bucket starts with: its borders, its length and, separated by source, whose it is.
    static func bucketFields(_ result: StatisticsResult) -> [Field] {
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
        return fields
    }

    static func fields(_ result: StatisticsResult, _ statistics: [String]) -> [Field] {
        var fields = bucketFields(result)
        for statistic in statistics {
            fields.append(Field(statistic, value(result, statistic).map { .double($0) } ?? .null))
        }
        if result.discrete == nil, result.provenance == nil {
            fields.append(Field("sources", .list(result.sources.map { .string($0.description) })))
        }
        return fields
    }

    /// A category bucket as JSON: the bucket, `count` (samples) and per value that occurs its `name`, `value`,
    /// `hours` and `count`.
    static func categoryFields(_ result: StatisticsResult, _ type: HealthType) -> [Field] {
        var fields = bucketFields(result)
        fields.append(Field("count", .int(result.categories.reduce(0) { $0 + $1.count })))
        fields.append(
            Field(
                "values",
                .list(
                    result.categories.map { entry in
                        .object([
                            Field("name", .string(type.name(of: entry.value) ?? String(entry.value))),
                            Field("value", .int(entry.value)), Field("hours", .double(entry.hours)),
                            Field("count", .int(entry.count)),
                        ])
                    })))
        return fields
    }

    /// A table of hours per value (one column per value that occurs) and the sample count, per bucket.
    static func renderCategories(_ results: [StatisticsResult], _ type: HealthType, byProvenance: Bool) -> String {
        guard !results.isEmpty else { return "No buckets.\n" }
        let occurring = Set(results.flatMap { $0.categories.map(\.value) }).sorted()
        var header = ["START"]
        if byProvenance { header.append("SOURCE") }
        header += occurring.map { "\(type.name(of: $0) ?? String($0)) (h)" } + ["COUNT"]
        let rows = results.map { result in
            var row = [StoreArguments.format(result.bucket.start, offsetSeconds: result.bucket.startOffsetSeconds)]
            if byProvenance { row.append(result.provenance?.description ?? "-") }
            for value in occurring {
                row.append(
                    result.categories.first { $0.value == value }.map { String(format: "%.2f", $0.hours) } ?? "-")
            }
            row.append(String(result.categories.reduce(0) { $0 + $1.count }))
            return row
        }
        return table(header: header, rows: rows)
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
