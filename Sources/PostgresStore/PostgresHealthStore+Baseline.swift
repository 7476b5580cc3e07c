import Foundation
public import Health
internal import StoreEngine

/// The ingest benchmark's baseline (BENCHMARKS.md, "postgres"): the same rows as ``save(_:as:)`` writes, COPYed
/// straight into `plain_samples`, a table made like `samples` (its indexes included), one transaction per call with
/// the same durable commit, and nothing else: no outcomes, no conflict handling, no rollups, no access log.
@_spi(Benchmarks)
extension PostgresHealthStore {
    public func plainCopy(_ samples: [QuantitySample]) throws {
        try writeTransaction { connection in
            try connection.run("CREATE TABLE IF NOT EXISTS plain_samples (LIKE samples INCLUDING ALL)")
            var buffer = CopyBuffer(capacity: samples.count * 120)
            let first = reserveSequence(samples.count)
            for (index, sample) in samples.enumerated() {
                buffer.field(try typeID(connection, sample.type.identifier))
                buffer.field(sample.start.milliseconds)
                buffer.field(sample.end.milliseconds)
                buffer.field(try sourceID(connection, sample.source))
                buffer.field(try deviceID(connection, sample.device))
                buffer.field(try subjectID(connection, sample.subject))
                buffer.field(sample.id.uuidString)
                buffer.field(Int64(sample.startOffsetSeconds))
                buffer.field(sample.value)
                buffer.field("owner")
                buffer.field(first + Int64(index))
                buffer.field(encodedMetadata(sample.metadata))
                buffer.endRow()
            }
            try connection.copy(
                """
                COPY plain_samples (type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid, start_offset_s,
                    value, writer, seq, metadata) FROM STDIN
                """, data: buffer.bytes)
        }
    }
}

@_spi(Benchmarks)
extension PostgresHealthStore {
    /// `VACUUM ANALYZE` of the whole database, so that a benchmark's queries after a bulk load run with the plans
    /// and visibility map autovacuum would give them a little later.
    public func vacuumAnalyze() throws {
        try withConnection { try $0.run("VACUUM ANALYZE") }
    }
}
