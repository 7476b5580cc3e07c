import BlueZ
import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Synchronization
import TestSupport
import Traces

/// The whole gateway as `GatewayServiceTests` runs it (a private bus, FakeBlueZ, the BlueZ client on a simulated
/// clock, the service, SQLite), with a ``TraceRecorder`` as the service's observer.
struct GatewayTraceFixture {
    let fake: FakeBlueZ
    let store: SQLiteHealthStore
    let writer: StoreWriter
    let service: GatewayService
    let recorder: TraceRecorder
    let time: SimulatedTime
    let directory: URL
    static let source = Source(identifier: "wearhouse", version: "test")

    /// Simulation time, read by the central's clock and the recorder.
    final class SimulatedTime: Sendable {
        let now = Mutex(Duration.seconds(1))
        let wallStart: Int64 = 1_795_946_400_000_000
        func timestamp() -> Timestamp {
            let now = self.now.withLock { $0 }
            let (seconds, attoseconds) = now.components
            return Timestamp(
                monotonic: now, wallMicroseconds: wallStart + seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        }
    }

    var tracePath: String { directory.appendingPathComponent("run.trace").path }

    static func run(
        _ scenario: FakeBlueZScenario, enrol: [(String, String)], _ body: (GatewayTraceFixture) async throws -> Void
    ) async throws {
        let daemon = try await PrivateBus.start()
        defer { daemon.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("traces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        let bus = try await DBusConnection.connect(to: .address(daemon.address))
        let time = SimulatedTime()
        await fake.tick(to: time.now.withLock { $0 })
        let central = try await BlueZCentral.start(on: bus, clock: { time.timestamp() })
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("live.db").path)
        for (address, subject) in enrol {
            try await store.register(RegisteredSensor(address: address, subject: subject, enrolledAt: Instant.now))
        }
        let writer = StoreWriter(
            sink: HealthStoreSink(store: store), settings: .init(batchSize: 100, flushInterval: .milliseconds(50)))
        let settings = GatewayService.Settings(
            source: source, connectTimeout: .seconds(2),
            session: .init(watchdog: .seconds(2), resolveTimeout: .seconds(5)), backoffMinimum: .milliseconds(50),
            backoffMaximum: .milliseconds(500), samples: .init(seriesWindow: .seconds(20)),
            timeZone: TimeZone(identifier: "Europe/Paris")!, statusInterval: .milliseconds(200),
            registryPollInterval: .milliseconds(100), tickInterval: .milliseconds(50))
        let recorder = try TraceRecorder(
            path: directory.appendingPathComponent("run.trace").path, recorder: "wearhouse test",
            samples: settings.samples, clock: { time.timestamp() })
        recorder.start()
        let service = GatewayService(
            central: central, registry: store, writer: writer, settings: settings,
            log: ServiceLog(level: .warning, destination: .standardError), observer: recorder)
        let fixture = GatewayTraceFixture(
            fake: fake, store: store, writer: writer, service: service, recorder: recorder, time: time,
            directory: directory)
        do {
            try await service.start()
            try await body(fixture)
        } catch {
            await service.stop()
            await central.shutdown(disconnecting: [])
            await bus.close()
            await fake.stop()
            throw error
        }
        await service.stop()
        await central.shutdown(disconnecting: [])
        await bus.close()
        await fake.stop()
    }

    /// Advances the simulation a second at a time.
    func run(seconds: Int) async throws {
        for _ in 0..<seconds {
            let next = time.now.withLock { now in
                now += .seconds(1)
                return now
            }
            await fake.tick(to: next)
            try await Task.sleep(for: .milliseconds(15))
        }
    }

    func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ done: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !done() {
            guard ContinuousClock.now < deadline else {
                throw FakeBlueZError(message: "timed out waiting for \(what); statuses \(await service.statuses())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func waitUntilStreaming(_ addresses: [String]) async throws {
        try await waitUntil("streaming \(addresses)") {
            let statuses = await service.statuses()
            return addresses.allSatisfy { address in
                statuses.contains { $0.address == address && $0.state == "streaming" }
            }
        }
    }
}

/// Everything a store holds, for comparing two stores.
struct StoreContents: Equatable {
    var quantities: [QuantitySample]
    var series: [HeartbeatSeriesSample]

    static func of(_ store: SQLiteHealthStore) async throws -> StoreContents {
        var quantities: [QuantitySample] = []
        for type in HealthTypeCatalog.all where type != .heartbeatSeries {
            var cursor: SampleCursor?
            repeat {
                let page = try await store.samples(SampleQuery(type: type, limit: 1000, cursor: cursor), as: .owner)
                quantities += page.samples
                cursor = page.next
            } while cursor != nil
        }
        let series = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        return StoreContents(
            quantities: quantities.sorted { $0.id.uuidString < $1.id.uuidString },
            series: series.sorted { $0.id.uuidString < $1.id.uuidString })
    }
}
