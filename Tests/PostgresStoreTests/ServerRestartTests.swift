import Foundation
import Gateway
import Health
import PostgresStore
import TestSupport
import Testing

/// The server goes away in the middle of a stream of writes and comes back: the gateway's writer keeps the failed
/// batches and retries them, the store reconnects, and the database ends with every sample exactly once.
@Suite struct ServerRestartTests {
    static let gateway = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
    static let strap = Device(
        name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", localIdentifier: "A0:01")

    func heartRate(_ second: Int64) -> QuantitySample {
        QuantitySample(
            type: .heartRate, start: Instant(seconds: 1_700_000_000 + second),
            end: Instant(seconds: 1_700_000_000 + second), value: Double(60 + second % 100), source: Self.gateway,
            device: Self.strap, subject: "alice")
    }

    @Test(arguments: [false, true])
    func restartingTheServerInTheMiddleOfWritesLosesNothingAndDuplicatesNothing(crash: Bool) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let url = try server.createDatabase()
        let store = try PostgresHealthStore(url: url)
        let writer = StoreWriter(
            sink: HealthStoreSink(store: store),
            settings: .init(batchSize: 200, flushInterval: .milliseconds(20), capacity: 100_000))

        let total: Int64 = 12_000
        try await writer.whileRunning {
            var restart: Task<Void, any Error>?
            for chunk in stride(from: Int64(0), to: total, by: 100) {
                // Each chunk also replays the chunk before it, as a gateway replaying a trace would.
                let replay = chunk >= 100 ? (chunk - 100..<chunk).map(heartRate) : []
                await writer.submit(replay + (chunk..<chunk + 100).map(heartRate))
                if chunk == total / 3 {
                    // Stop (fast: clients are disconnected; crash: an immediate shutdown) and start again, while the
                    // writer keeps writing.
                    restart = Task.detached {
                        try server.stopServer(fast: !crash)
                        try await Task.sleep(for: .milliseconds(300))
                        try server.startServer()
                    }
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            try await restart?.value
        }

        let counters = await writer.counters
        #expect(counters.failedWrites > 0)  // the restart was noticed
        #expect(counters.rejected == 0)
        #expect(counters.conflicts == 0)
        #expect(counters.inserted + counters.duplicates == counters.submitted)
        let stored = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(stored.count == Int(total))
        #expect(Set(stored.map(\.id)).count == Int(total))
        let expectedStarts: [Int64] = (0..<total).map { (second: Int64) -> Int64 in (1_700_000_000 + second) * 1000 }
        #expect(stored.map(\.start.milliseconds) == expectedStarts)
        // The rollups saw every sample once.
        let days = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1d"), timeZone: .gmt)
            .buckets(from: Instant(seconds: 1_699_920_000), to: Instant(seconds: 1_700_092_800))
        let statistics = try await store.statistics(StatisticsQuery(type: .heartRate, buckets: days), as: .owner)
        #expect(statistics.map { $0.discrete?.count ?? 0 }.reduce(0, +) == Int(total))
    }

    @Test func callsFailFastWhileTheServerIsDownAndRecoverAfter() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let store = try PostgresHealthStore(url: try server.createDatabase())
        #expect(try await store.save([heartRate(0)], as: .owner) == [.inserted])
        try server.stopServer()
        await #expect(throws: PostgresError.self) { try await store.save([heartRate(1)], as: .owner) }
        do {
            _ = try await store.samples(SampleQuery(type: .heartRate), as: .owner)
            Issue.record("a query succeeded without a server")
        } catch let error as PostgresError {
            #expect(error.isConnectionFailure)
        }
        try server.startServer()
        try await Task.sleep(for: .milliseconds(300))  // one failed attempt: a 100 ms wait
        #expect(try await store.save([heartRate(1)], as: .owner) == [.inserted])
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 2)
    }
}
