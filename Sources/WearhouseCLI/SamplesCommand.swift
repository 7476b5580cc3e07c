import Foundation
import GATT
import Health
import SQLiteStore

/// `wearhouse samples --type T`: the stored samples of one type, as a table, JSON lines or CSV.
struct SamplesCommand: Command {
    let name = "samples"
    let abstract = "List stored samples of one type."
    var discussion: String {
        """
        Times are ISO 8601: with Z or an offset they are instants, without they are wall time in --time-zone
        (default UTC). A sample matches when it overlaps [--from, --to). Lists are comma-separated.
        heartbeatSeries lists one line per series (beats, mean RR interval, gaps); json adds every beat.

        EXAMPLES:
          wearhouse samples --type heartRate --from 2025-03-30 --to 2025-03-31 --time-zone Europe/Berlin
          wearhouse samples --type stepCount --subject alice --format csv
          wearhouse samples --type heartbeatSeries --from 2025-03-30T06:00 --format json
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
        var limit = 1000
        var format = Format.table
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        StoreOptions.type(\.type, help: "The type (see 'wearhouse types')."),
        StoreOptions.time("from", \.from, help: "Range start."),
        StoreOptions.time("to", \.to, help: "Range end (exclusive)."), StoreOptions.timeZone(\.timeZone),
        .list("subject", value: "names", \.subjects, help: "Only these subjects."),
        .list("device", value: "keys", \.devices, help: "Only these devices (BLE address or key)."),
        .list("source", value: "ids", \.sources, help: "Only these sources."),
        .integer("limit", in: 0...Int.max, \.limit, help: "At most n samples, 0 for all."),
        .choice("format", \.format, help: "How to print: a table, JSON (one object per line) or CSV."),
        StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            let type = options.type
            let format = options.format
            let query = SampleQuery(
                type: type, from: StoreOptions.instant(options.from, in: options.timeZone),
                to: StoreOptions.instant(options.to, in: options.timeZone), sources: options.sources,
                devices: options.devices, subjects: options.subjects, limit: options.limit == 0 ? nil : options.limit)
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            if type.aggregation == .series {
                console.out(Self.render(try await store.heartbeatSeries(query, as: .owner).series, format: format))
                return .success
            }
            let samples = try await store.samples(query, as: .owner).samples
            console.out(Self.render(samples, format: format))
            return .success
        }
    }

    static func fields(_ sample: QuantitySample) -> [Field] {
        [
            Field("uuid", .string(sample.id.uuidString.lowercased())),
            Field("type", .string(sample.type.identifier)),
            Field("start", .string(StoreArguments.format(sample.start, offsetSeconds: sample.startOffsetSeconds))),
            Field("end", .string(StoreArguments.format(sample.end, offsetSeconds: sample.startOffsetSeconds))),
            Field("value", .double(sample.value)),
            Field("unit", .string(sample.type.canonicalUnit)),
            Field("source", .string(sample.source.identifier)),
            Field("source_version", sample.source.version.map { .string($0) } ?? .null),
            Field("device", sample.device.map { .string($0.key) } ?? .null),
            Field("device_name", sample.device?.name.map { .string($0) } ?? .null),
            Field("subject", sample.subject.map { .string($0) } ?? .null),
        ]
    }

    static func render(_ samples: [QuantitySample], format: Format) -> String {
        switch format {
        case .json:
            return samples.map { FieldValue.object(fields($0)).json + "\n" }.joined()
        case .csv:
            let header = "uuid,type,start,end,value,unit,source,source_version,device,device_name,subject\n"
            return header
                + samples.map { sample in
                    fields(sample).map { csvCell($0.value) }.joined(separator: ",") + "\n"
                }.joined()
        case .table:
            guard !samples.isEmpty else { return "No samples.\n" }
            let rows = samples.map { sample in
                [
                    StoreArguments.format(sample.start, offsetSeconds: sample.startOffsetSeconds),
                    sample.end == sample.start
                        ? "" : StoreArguments.format(sample.end, offsetSeconds: sample.startOffsetSeconds),
                    "\(DecodeCommand.textValue(.double(sample.value))) \(sample.type.canonicalUnit)",
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
            return text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        default: return value.json
        }
    }
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
