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
            var buffer = CopyBinaryBuffer(capacity: samples.count * 130)
            let first = reserveSequence(samples.count)
            let writer = Array("owner".utf8)
            for (index, sample) in samples.enumerated() {
                buffer.row(fields: 12)
                buffer.int32(Int32(truncatingIfNeeded: try typeID(connection, sample.type.identifier)))
                buffer.int64(sample.start.milliseconds)
                buffer.int64(sample.end.milliseconds)
                buffer.int32(Int32(truncatingIfNeeded: try sourceID(connection, sample.source)))
                buffer.int32(Int32(truncatingIfNeeded: try deviceID(connection, sample.device)))
                buffer.int32(Int32(truncatingIfNeeded: try subjectID(connection, sample.subject)))
                buffer.uuid(sample.id)
                buffer.int32(sample.startOffsetSeconds)
                buffer.double(sample.value)
                buffer.bytes(writer)
                buffer.int64(first + Int64(index))
                buffer.text(encodedMetadata(sample.metadata))
            }
            try connection.copy(
                "COPY plain_samples (\(Self.stagedColumns)) FROM STDIN (FORMAT binary)", data: buffer.finished())
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
