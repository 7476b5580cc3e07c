import Foundation
import GATT
import Health

/// `wearhouse samples --type heartbeatSeries`: one line per series (its beats summarised), the beats themselves
/// in JSON.
extension SamplesCommand {
    static func fields(_ series: HeartbeatSeriesSample, beats: Bool) -> [Field] {
        let rr = series.beats.map(\.rrMilliseconds)
        let mean = rr.isEmpty ? nil : rr.reduce(0, +) / Double(rr.count)
        var fields = [
            Field("uuid", .string(series.id.uuidString.lowercased())),
            Field("type", .string(HealthType.heartbeatSeries.identifier)),
            Field("start", .string(StoreArguments.format(series.start, offsetSeconds: series.startOffsetSeconds))),
            Field("end", .string(StoreArguments.format(series.end, offsetSeconds: series.startOffsetSeconds))),
            Field("beat_count", .int(series.beats.count)),
            Field("mean_rr_ms", mean.map { .double(($0 * 1_000).rounded() / 1_000) } ?? .null),
            Field("gaps", .int(series.beats.count { $0.precededByGap })),
            Field("source", .string(series.source.identifier)),
            Field("source_version", series.source.version.map { .string($0) } ?? .null),
            Field("device", series.device.map { .string($0.key) } ?? .null),
            Field("device_name", series.device?.name.map { .string($0) } ?? .null),
            Field("subject", series.subject.map { .string($0) } ?? .null),
        ]
        if beats {
            fields.append(Field("metadata", series.metadata.isEmpty ? .null : ExportCommand.metadata(series.metadata)))
            fields.append(
                Field(
                    "beats",
                    .list(
                        series.beats.map { beat in
                            .object([
                                Field("offset_ms", .double(beat.offsetMilliseconds)),
                                Field("rr_ms", .double(beat.rrMilliseconds)),
                                Field("gap", .bool(beat.precededByGap)),
                            ])
                        })))
        }
        return fields
    }

    /// The series in `format`; `header`: CSV starts with its header line (a table always has one).
    static func render(_ series: [HeartbeatSeriesSample], format: Format, header: Bool = true) -> String {
        switch format {
        case .json:
            return series.map { FieldValue.object(fields($0, beats: true)).json + "\n" }.joined()
        case .csv:
            let names =
                "uuid,type,start,end,beat_count,mean_rr_ms,gaps,source,source_version,device,device_name,subject\n"
            return (header ? names : "")
                + series.map { fields($0, beats: false).map { csvCell($0.value) }.joined(separator: ",") + "\n" }
                .joined()
        case .table:
            guard !series.isEmpty else { return "No samples.\n" }
            let rows = series.map { series in
                let rr = series.beats.map(\.rrMilliseconds)
                let mean = rr.isEmpty ? 0 : rr.reduce(0, +) / Double(rr.count)
                return [
                    StoreArguments.format(series.start, offsetSeconds: series.startOffsetSeconds),
                    StoreArguments.format(series.end, offsetSeconds: series.startOffsetSeconds),
                    "\(series.beats.count)", String(format: "%.1f ms", mean),
                    "\(series.beats.count { $0.precededByGap })", series.device?.name ?? series.device?.key ?? "-",
                    series.subject ?? "-", series.source.identifier,
                ]
            }
            return table(
                header: ["START", "END", "BEATS", "MEAN RR", "GAPS", "DEVICE", "SUBJECT", "SOURCE"], rows: rows)
        }
    }
}
