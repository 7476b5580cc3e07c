import Foundation
import GATT
import Health
import SQLiteStore
import StoreEngine

/// `wearhouse samples --type T`: the stored samples of one type, as a table, JSON lines or CSV.
struct SamplesCommand: Command {
    let name = "samples"
    let abstract = "List stored samples of one type."
    var discussion: String {
        """
        Times are ISO 8601: with Z or an offset they are instants, without they are wall time in --time-zone
        (default UTC). A sample matches when it overlaps [--from, --to). Lists are comma-separated.
        heartbeatSeries lists one line per series (beats, mean RR interval, gaps); json adds every beat.
        bloodPressure and food list correlations (json: their members under objects), workout the workouts
        (json: activity type, duration, totals, events and the ids of their samples).
        Every matching sample is printed (json and csv as they are read, \(ExportCommand.columnsPageSize) at a time);
        with --limit n only the first n, and stderr says when more match.

        EXAMPLES:
          wearhouse samples --type heartRate --from 2025-03-30 --to 2025-03-31 --time-zone Europe/Berlin
          wearhouse samples --type stepCount --subject alice --format csv
          wearhouse samples --type stepCount --sort -start,-end --limit 20
          wearhouse samples --type heartbeatSeries --from 2025-03-30T06:00 --format json
          wearhouse samples --type bloodPressure --format json
          wearhouse samples --type workout --from 2025-03-01
        """
    }

    /// What `--format` names.
    enum Format: String, CaseIterable, Sendable {
        case table, json, csv
    }

    struct Options: CommandOptions {
        /// A placeholder until parsing sets it: `--type` is required.
        var type = HealthType.heartRate
        var from: StatisticsTime?
        var to: StatisticsTime?
        var timeZone = StoreOptions.utc
        var subjects: [String]?
        var devices: [String]?
        var sources: [String]?
        /// `nil`: by start then end, oldest first.
        var sort: [SampleSortDescriptor]?
        /// 0: every matching sample.
        var limit = 0
        var format = Format.table
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        StoreOptions.type(\.type, help: "The type (see 'wearhouse types').", objects: true),
        StoreOptions.time("from", \.from, help: "Range start."),
        StoreOptions.time("to", \.to, help: "Range end (exclusive)."), StoreOptions.timeZone(\.timeZone),
        .list("subject", value: "names", \.subjects, help: "Only these subjects."),
        .list("device", value: "keys", \.devices, help: "Only these devices (BLE address or key)."),
        .list("source", value: "ids", \.sources, help: "Only these sources."),
        .value(
            "sort", value: "keys", \.sort,
            help: "Sort by these keys in order: start, end; a leading - sorts descending (start,-end)."
        ) { text throws(UsageError) in
            do {
                return try SampleSortDescriptor.parse(text)
            } catch {
                throw UsageError("--sort: \(error)")
            }
        },
        .integer("limit", in: 0...Int.max, \.limit, help: "At most n samples (default 0: all)."),
        .choice("format", \.format, help: "How to print: a table, JSON (one object per line) or CSV."),
        StoreOptions.store(\.store),
    ])

    /// How many samples one store query reads; json and csv print each page before reading the next.
    static let pageSize = 1_000

    func run(_ options: Options, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            let type = options.type
            let format = options.format
            let query = SampleQuery(
                type: type, from: StoreOptions.instant(options.from, in: options.timeZone),
                to: StoreOptions.instant(options.to, in: options.timeZone), sources: options.sources,
                devices: options.devices, subjects: options.subjects, sort: options.sort)
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            let limit = options.limit == 0 ? nil : options.limit
            let progress =
                format != .table && console.showsProgress(dataOnTerminal: true) ? CountProgress(console) : nil
            var printed = 0
            let cut: Bool
            if type.kind == .correlation {
                var listed: [Correlation] = []
                cut = try await Self.pages(
                    query, limit: limit, read: { try await store.correlations($0, as: .owner) }
                ) { page, first in
                    if format == .table {
                        listed += page.correlations
                    } else {
                        console.out(
                            page.correlations.map { correlation in
                                format == .json
                                    ? FieldValue.object(ObjectRecords.fields(correlation)).json + "\n"
                                    : ObjectRecords.csv(correlation)
                            }.joined(separator: "").withHeader(first && format == .csv))
                    }
                }
                if format == .table {
                    console.out(
                        ObjectRecords.render(
                            listed.map {
                                (
                                    $0.start, $0.end, $0.startOffsetSeconds, ObjectRecords.summary($0), $0.device,
                                    $0.subject, $0.source
                                )
                            }))
                }
            } else if type.kind == .workout {
                var listed: [Workout] = []
                cut = try await Self.pages(query, limit: limit, read: { try await store.workouts($0, as: .owner) }) {
                    page, first in
                    if format == .table {
                        listed += page.workouts
                    } else {
                        var text = ""
                        for workout in page.workouts {
                            let ids = try await store.workoutSampleIDs(workout.id, as: .owner).values.flatMap { $0 }
                            text +=
                                format == .json
                                ? FieldValue.object(ObjectRecords.fields(workout, samples: ids)).json + "\n"
                                : ObjectRecords.csv(workout, samples: ids)
                        }
                        console.out(text.withHeader(first && format == .csv))
                    }
                }
                if format == .table {
                    console.out(
                        ObjectRecords.render(
                            listed.map {
                                (
                                    $0.start, $0.end, $0.startOffsetSeconds, ObjectRecords.summary($0), $0.device,
                                    $0.subject, $0.source
                                )
                            }))
                }
            } else if type.aggregation == .series {
                var listed: [HeartbeatSeriesSample] = []
                cut = try await Self.pages(
                    query, limit: limit, read: { try await store.heartbeatSeries($0, as: .owner) }
                ) { page, first in
                    if format == .table {
                        listed += page.series
                    } else {
                        console.out(Self.render(page.series, format: format, header: first))
                        printed += page.series.count
                        progress?.show(printed)
                    }
                }
                if format == .table { console.out(Self.render(listed, format: format)) }
            } else if format == .table {
                var listed: [QuantitySample] = []
                cut = try await Self.pages(query, limit: limit, read: { try await store.samples($0, as: .owner) }) {
                    page, _ in listed += page.samples
                }
                console.out(Self.render(listed, format: format))
            } else {
                // Column by column, into large writes.
                let output = OutputBuffer { bytes throws(PrivateFile.Failure) in console.outBytes(bytes) }
                var writer = SampleLineWriter.samples(format)
                cut = try await Self.pages(
                    query, limit: limit, pageSize: ExportCommand.columnsPageSize,
                    read: { try await store.sampleColumns($0, as: .owner) }
                ) { page, first in
                    if first, format == .csv { output.append(ExportCommand.csvHeader) }
                    printed += try writer.write(page, to: output)
                    progress?.show(printed)
                }
                try output.flush()
            }
            progress?.end()
            if cut, let limit {
                console.err("wearhouse: printed the first \(limit) samples; more match (--limit 0 prints all)\n")
            }
            return .success
        }
    }

    /// Reads `query` page by page (``pageSize`` at a time, at most `limit` in all), handing each page to `print`
    /// with whether it is the first; each page is read (on the store's executor) while the one before it is printed.
    /// Returns whether `limit` cut the listing short: more samples match after the last one printed.
    static func pages<Page: ListedPage & Sendable>(
        _ query: SampleQuery, limit: Int?, pageSize: Int = pageSize,
        read: @escaping @Sendable (SampleQuery) async throws -> Page, print: (Page, Bool) async throws -> Void
    ) async throws -> Bool {
        var query = query
        var remaining = limit ?? Int.max
        var first = true
        query.limit = min(remaining, pageSize)
        var page = try await read(query)
        while true {
            remaining -= page.count
            var following: SampleQuery?
            if let next = page.next {
                query.cursor = next
                // Past the limit, one sample more tells whether the limit cut anything.
                query.limit = remaining <= 0 ? 1 : min(remaining, pageSize)
                following = query
            }
            async let upcoming = Self.page(following, read)
            try await print(page, first)
            first = false
            guard let next = try await upcoming else { return false }
            if remaining <= 0 { return next.count > 0 }
            page = next
        }
    }

    /// The page `query` reads, if there is a query.
    private static func page<Page: Sendable>(
        _ query: SampleQuery?, _ read: @Sendable (SampleQuery) async throws -> Page
    ) async throws -> Page? {
        guard let query else { return nil }
        return try await read(query)
    }

    /// A sample's fields; a category sample's value is its integer and, with `valueName` (JSON, not CSV, whose
    /// columns are fixed), its name in `value_name`; it has no unit.
    static func fields(_ sample: QuantitySample, valueName: Bool = true) -> [Field] {
        let category = sample.type.kind == .category
        var fields = [
            Field("uuid", .string(sample.id.uuidString.lowercased())),
            Field("type", .string(sample.type.identifier)),
            Field("start", .string(StoreArguments.format(sample.start, offsetSeconds: sample.startOffsetSeconds))),
            Field("end", .string(StoreArguments.format(sample.end, offsetSeconds: sample.startOffsetSeconds))),
            category ? Field("value", .integer(Int64(sample.value))) : Field("value", .double(sample.value)),
            Field("unit", category ? .null : .string(sample.type.canonicalUnit)),
            Field("source", .string(sample.source.identifier)),
            Field("source_version", sample.source.version.map { .string($0) } ?? .null),
            Field("device", sample.device.map { .string($0.key) } ?? .null),
            Field("device_name", sample.device?.name.map { .string($0) } ?? .null),
            Field("subject", sample.subject.map { .string($0) } ?? .null),
            Field("metadata", sample.metadata.isEmpty ? .null : ExportCommand.metadata(sample.metadata)),
        ]
        if category, valueName {
            fields.insert(Field("value_name", .string(categoryName(sample))), at: 5)
        }
        return fields
    }

    /// `asleepDeep` for a sleep analysis sample of value 4 (its integer when the enumeration has no name for it).
    static func categoryName(_ sample: QuantitySample) -> String {
        Int(exactly: sample.value).flatMap { sample.type.name(of: $0) }
            ?? DecodeCommand.textValue(.double(sample.value))
    }

    /// The samples in `format`; `header`: CSV starts with its header line (a table always has one).
    static func render(_ samples: [QuantitySample], format: Format, header: Bool = true) -> String {
        switch format {
        case .json:
            return samples.map { FieldValue.object(fields($0)).json + "\n" }.joined()
        case .csv:
            return (header ? ExportCommand.csvHeader : "")
                + samples.map { sample in
                    fields(sample, valueName: false).map { csvCell($0.value) }.joined(separator: ",") + "\n"
                }.joined()
        case .table:
            guard !samples.isEmpty else { return "No samples.\n" }
            let rows = samples.map { sample in
                [
                    StoreArguments.format(sample.start, offsetSeconds: sample.startOffsetSeconds),
                    sample.end == sample.start
                        ? "" : StoreArguments.format(sample.end, offsetSeconds: sample.startOffsetSeconds),
                    sample.type.kind == .category
                        ? categoryName(sample)
                        : "\(DecodeCommand.textValue(.double(sample.value))) \(sample.type.canonicalUnit)",
                    sample.device?.name ?? sample.device?.key ?? "-", sample.subject ?? "-", sample.source.identifier,
                ]
            }
            return table(header: ["START", "END", "VALUE", "DEVICE", "SUBJECT", "SOURCE"], rows: rows)
        }
    }

    static func csvCell(_ value: FieldValue) -> String {
        switch value {
        case .null: return ""
        case .string(let text):
            // Bytes, not characters: a comma, quote or newline is one byte in UTF-8 (and a listing's hot path).
            return text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        case .object, .list: return csvCell(.string(value.json))
        default: return value.json
        }
    }
}

/// A page of a sample listing: how many samples it holds and where the next page starts.
protocol ListedPage {
    var count: Int { get }
    var next: SampleCursor? { get }
}

extension SampleColumns: ListedPage {}

extension SamplePage: ListedPage {
    var count: Int { samples.count }
}

extension CorrelationPage: ListedPage {
    var count: Int { correlations.count }
}

extension WorkoutPage: ListedPage {
    var count: Int { workouts.count }
}

extension String {
    /// The text after the CSV header when `header`.
    func withHeader(_ header: Bool) -> String { header ? ExportCommand.csvHeader + self : self }
}

extension HeartbeatSeriesPage: ListedPage {
    var count: Int { series.count }
}

/// Left-aligned columns separated by two spaces.
func table(header: [String], rows: [[String]]) -> String {
    var widths = header.map(\.count)
    for row in rows {
        for (index, cell) in row.enumerated() where index < widths.count {
            widths[index] = max(widths[index], cell.count)
        }
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0)
        }.joined() + "\n"
    }
    return line(header) + rows.map(line).joined()
}
