import Foundation
import GATT
import Health
import SQLiteStore

/// `wearhouse samples --type T`: the stored samples of one type, as a table, JSON lines or CSV.
struct SamplesCommand: Command {
    let name = "samples"
    let abstract = "List stored samples of one type."
    let usage =
        "--type <type> [--from <time>] [--to <time>] [--subject <names>] [--device <keys>] [--source <ids>] [--limit <n>] [--format table|json|csv]"
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
    let options = OptionTable(
        valued: [
            StoreLocation.option, ("type", "type", "The type (see 'wearhouse types')."),
            ("from", "time", "Range start."), ("to", "time", "Range end (exclusive)."),
            ("time-zone", "zone", "IANA zone for wall times (default UTC)."),
            ("subject", "names", "Only these subjects."),
            ("device", "keys", "Only these devices (BLE address or key)."),
            ("source", "ids", "Only these sources."), ("limit", "n", "At most n samples (default 1000, 0 for all)."),
            ("format", "format", "table (default), json (one object per line) or csv."),
        ])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            let type = try StoreArguments.type(arguments)
            let zone = try StoreArguments.timeZone(arguments)
            let limitText = arguments.option("limit") ?? "1000"
            guard let limit = Int(limitText), limit >= 0 else {
                console.error("--limit must be a whole number, not '\(limitText)'")
                return .usage
            }
            let format = arguments.option("format") ?? "table"
            guard ["table", "json", "csv"].contains(format) else {
                console.error("--format must be table, json or csv, not '\(format)'")
                return .usage
            }
            let query = SampleQuery(
                type: type, from: try StoreArguments.instant(arguments, "from", zone: zone),
                to: try StoreArguments.instant(arguments, "to", zone: zone),
                sources: StoreArguments.list(arguments, "source"), devices: StoreArguments.list(arguments, "device"),
                subjects: StoreArguments.list(arguments, "subject"), limit: limit == 0 ? nil : limit)
            let store = try StoreLocation.open(arguments, mustExist: true)
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

    static func render(_ samples: [QuantitySample], format: String) -> String {
        switch format {
        case "json":
            return samples.map { FieldValue.object(fields($0)).json + "\n" }.joined()
        case "csv":
            let header = "uuid,type,start,end,value,unit,source,source_version,device,device_name,subject\n"
            return header
                + samples.map { sample in
                    fields(sample).map { csvCell($0.value) }.joined(separator: ",") + "\n"
                }.joined()
        default:
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
