import Foundation
import Health
import PostgresStore
import TestSupport
import Testing

/// A gateway batch (``SampleBatch``: samples and heartbeat series) is one transaction on the server, as
/// `HealthStore` promises: every row the save writes carries the id of the transaction that wrote it (`xmin`).
@Suite struct BatchTransactionTests {
    static let gateway = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
    static let strap = Device(
        name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", localIdentifier: "A0:01")

    @Test func aBatchOfSamplesAndHeartbeatSeriesIsOneServerTransaction() async throws {
        let server = try PostgresServer.shared()
        let url = try server.createDatabase()
        let database = String(try #require(url.split(separator: "=").last))
        defer { _ = try? server.psql("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        let store = try PostgresHealthStore(url: url)

        var rates = QuantitySeries(type: .heartRate, source: Self.gateway, device: Self.strap, subject: "alice")
        var steps = QuantitySeries(type: .stepCount, source: Self.gateway, device: Self.strap, subject: "alice")
        for second in Int64(0)..<100 {
            rates.append(start: second * 1_000, end: second * 1_000, value: Double(60 + second % 30))
            steps.append(start: second * 1_000, end: second * 1_000 + 1_000, value: 2)
        }
        let beats = (0..<50).map { Beat(offsetMilliseconds: Double($0) * 1_000, rrMilliseconds: 1_000) }
        var batch = SampleBatch()
        batch.append(rates)
        batch.append(steps)
        batch.heartbeats = [
            HeartbeatSeriesSample(
                start: Instant(seconds: 0), end: Instant(seconds: 60), beats: beats, source: Self.gateway,
                device: Self.strap, subject: "alice")
        ]
        #expect(try await store.save(batch, as: .owner) == Array(repeating: .inserted, count: 201))

        // The samples, the series and the access log entries of the save, each with its writing transaction.
        let transactions = try server.psql(
            """
            SELECT 'samples', count(*), count(DISTINCT xmin::text) FROM samples
            UNION ALL SELECT 'heartbeat_series', count(*), count(DISTINCT xmin::text) FROM heartbeat_series
            UNION ALL SELECT 'all', count(*), count(DISTINCT xmin::text) FROM (
                SELECT xmin FROM samples UNION ALL SELECT xmin FROM heartbeat_series
                UNION ALL SELECT xmin FROM access_log WHERE operation = 'save') AS written
            """, database: database)
        #expect(transactions.split(separator: "\n") == ["samples|200|1", "heartbeat_series|1|1", "all|204|1"])
    }
}
