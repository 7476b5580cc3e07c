import Foundation
import GATT
import Health
import SQLiteStore
import StoreEngine

/// `wearhouse export --format sqlite --out FILE`: a plain database of one row per sample (docs/sqlite-export.md).
extension ExportCommand {
    /// Writes every sample of `types` that `query` selects into a new SQLite file at `path`; returns the count.
    static func exportSQLite(
        from store: any HealthStoreEngine, types: [HealthType], query base: SampleQuery, to path: String
    ) async throws -> Int {
        let file = try SQLiteExportFile(path: path)
        var count = 0
        for type in types {
            var query = base
            query.type = type
            while true {
                let next: SampleCursor?
                if type.aggregation == .series {
                    let page = try await store.heartbeatSeries(query, as: .owner)
                    for series in page.series { try insert(series, into: file) }
                    count += page.series.count
                    next = page.next
                } else {
                    let page = try await store.samples(query, as: .owner)
                    for sample in page.samples { try file.insert(row(Record(sample), value: sample.value)) }
                    count += page.samples.count
                    next = page.next
                }
                guard let next else { break }
                query.cursor = next
            }
        }
        try file.finish(
            types: types.map { ($0.identifier, $0.canonicalUnit, $0.aggregation.rawValue) })
        return count
    }

    private static func insert(_ series: HeartbeatSeriesSample, into file: SQLiteExportFile) throws {
        let record = Record(series)
        let uuid = series.id.uuidString.lowercased()
        try file.insert(row(record, value: nil))
        for beat in series.beats {
            let at = Double(series.start.milliseconds) + beat.offsetMilliseconds
            let instant = series.start.adding(milliseconds: Int64(beat.offsetMilliseconds.rounded(.down)))
            try file.insertBeat(
                series: uuid, time: StoreArguments.format(instant, offsetSeconds: record.startOffsetSeconds),
                epochMilliseconds: at, rr: beat.rrMilliseconds, gap: beat.precededByGap)
        }
    }

    private static func row(_ record: Record, value: Double?) -> SQLiteExportFile.Sample {
        SQLiteExportFile.Sample(
            uuid: record.id.uuidString.lowercased(), type: record.type.identifier,
            start: StoreArguments.format(record.start, offsetSeconds: record.startOffsetSeconds),
            end: StoreArguments.format(record.end, offsetSeconds: record.startOffsetSeconds),
            startMilliseconds: record.start.milliseconds, endMilliseconds: record.end.milliseconds,
            offsetSeconds: record.startOffsetSeconds, value: value, unit: record.type.canonicalUnit,
            source: record.source.identifier, sourceVersion: record.source.version, device: record.device?.key,
            deviceName: record.device?.name, subject: record.subject,
            metadata: record.metadata.isEmpty ? nil : metadata(record.metadata).json)
    }
}
