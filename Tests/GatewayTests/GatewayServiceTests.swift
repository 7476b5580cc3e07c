import BlueZ
import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Synchronization
import TestSupport
import Testing

/// The whole gateway: BlueZCentral over a private dbus-daemon, FakeBlueZ, the service, a real SQLite store.
@Suite(.serialized) struct GatewayServiceTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let pod = "C0:FF:EE:00:00:02"
    static let wrist = "C0:FF:EE:00:00:03"
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: strap, seed: 7, known: true),
        .init(kind: .footpod, address: pod, seed: 3, known: true),
        .init(kind: .wristMonitor, address: wrist, seed: 5, known: true),
    ])

    @Test func samplesFromTwoPeopleAreStoredWithTheirDeviceLocationAndSubject() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice"), (Self.pod, "bob")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap, Self.pod])
            try await fixture.run(seconds: 40)
            await fixture.service.stop()

            let truth = try #require(await fixture.fake.groundTruth(of: Self.strap))
            let rates = try await fixture.quantities(.heartRate)
            // Everything sent after the subscription (the simulation ran a second before it) is stored, in order.
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
            #expect(rates.map { UInt16($0.value) } == Array(truth.heartRates.filter { $0 > 0 }.suffix(rates.count)))
            let first = try #require(rates.first)
            #expect(first.subject == "alice")
            #expect(first.device?.localIdentifier == Self.strap)
            #expect(first.device?.manufacturer != nil)
            #expect(first.device?.serialNumber != nil)
            #expect(first.metadata[MetadataKey.heartRateSensorLocation] == .number(1))
            #expect(first.source.identifier == "wearhouse")
            let series = try await fixture.series()
            #expect(series.flatMap(\.beats).count == truth.rrIntervals.count)
            #expect(series.allSatisfy { $0.subject == "alice" })

            let podTruth = try #require(await fixture.fake.groundTruth(of: Self.pod))
            let measurements = try podTruth.emissions.filter { $0.characteristic == .rscMeasurement }
                .map { try RSCMeasurement(decoding: $0.value) }.suffix(fixture.delivered(.rscMeasurement))
            let expected =
                Double((measurements.last?.totalDistance ?? 0) - (measurements.first?.totalDistance ?? 0)) / 10
            let distance = try await fixture.quantities(.distanceWalkingRunning)
            #expect(abs(distance.reduce(0) { $0 + $1.value } - expected) < 0.001)
            #expect(distance.allSatisfy { $0.subject == "bob" && $0.device?.localIdentifier == Self.pod })
            let speeds = try await fixture.quantities(.runningSpeed)
            #expect(speeds.count == measurements.count)

            let statuses = try await fixture.store.sensorStatuses()
            #expect(Set(statuses.map(\.address)) == [Self.strap, Self.pod])
            #expect(statuses.allSatisfy { $0.notifications > 0 && $0.samples > 0 })
            #expect(await fixture.fake.isConnected(Self.strap) == false)  // released at stop (R13)
        }
    }

    @Test func linkLossAbortedConnectsAndSilenceAreRecoveredWithoutDuplicates() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            // The link drops and the next connect aborts once.
            await fixture.fake.setConnectFault(.abortByLocal, for: Self.strap)
            await fixture.fake.dropConnection(of: Self.strap)
            try await Task.sleep(for: .milliseconds(300))
            await fixture.fake.setConnectFault(nil, for: Self.strap)
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            // Out of range: the watchdog (2 s here) notices the silence; back in range, it streams again.
            await fixture.fake.setNearby(false, for: Self.strap)
            try await fixture.waitUntil("watchdog") {
                try await fixture.status(Self.strap)?.reconnects ?? 0 >= 2
            }
            await fixture.fake.setNearby(true, for: Self.strap)
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            await fixture.service.stop()

            let rates = try await fixture.quantities(.heartRate)
            #expect(Set(rates.map(\.id)).count == rates.count)
            let counters = await fixture.writer.counters
            #expect(counters.duplicates == 0 && counters.rejected == 0 && counters.conflicts == 0)
            // Every value the sensor sent while subscribed is stored once.
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
        }
    }

    @Test func bluetoothdRestartingAndTheAdapterReturningAreRecovered() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 3)
            await fixture.fake.removeAdapter()
            try await fixture.waitUntil("waiting") { try await fixture.status(Self.strap)?.state == "waiting" }
            await fixture.fake.addAdapter()
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 3)

            try await fixture.restartBluetoothd()
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 3)
            await fixture.service.stop()
            let rates = try await fixture.quantities(.heartRate)
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
        }
    }

    @Test func aSensorEnrolledForAcquireNotifyStreamsThroughItsSocketAcrossReconnects() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: []) { fixture in
            try await fixture.store.register(
                RegisteredSensor(address: Self.strap, subject: "alice", notifyMode: .acquired, enrolledAt: Instant.now))
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            await fixture.fake.dropConnection(of: Self.strap)
            try await fixture.waitUntil("reconnected") { try await fixture.status(Self.strap)?.reconnects ?? 0 >= 1 }
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            await fixture.service.stop()
            let rates = try await fixture.quantities(.heartRate)
            #expect(rates.count >= 8)
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
            // Nothing came as PropertiesChanged: the Value property stays empty while acquired.
            let delivered = await fixture.fake.deliveredNotifications(of: Self.strap).count
            #expect(delivered == rates.count)
        }
    }

    @Test func aSensorEnrolledWhileRunningIsPickedUpAndAForgottenOneReleased() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.store.register(
                RegisteredSensor(address: Self.wrist, subject: "carol", location: "wrist", enrolledAt: Instant.now))
            try await fixture.waitUntilStreaming([Self.wrist])
            _ = try await fixture.store.forgetSensor(Self.strap)
            try await fixture.waitUntil("released") { await !fixture.fake.isConnected(Self.strap) }
            try await fixture.run(seconds: 3)
            await fixture.service.stop()
            let wrist = try await fixture.quantities(.heartRate).filter { $0.device?.localIdentifier == Self.wrist }
            #expect(!wrist.isEmpty)
            #expect(
                wrist.allSatisfy {
                    $0.subject == "carol" && $0.metadata[MetadataKey.heartRateSensorLocation] == .number(2)
                })
        }
    }
}

/// A private bus with FakeBlueZ, the production BlueZ client on a simulated clock, a store in a temporary
/// folder, and the gateway service over them.
struct GatewayFixture {
    let daemon: PrivateBus
    var fake: FakeBlueZ { fakeBox.value.withLock { $0 } }
    let fakeBox: Box<FakeBlueZ>
    let scenario: FakeBlueZScenario
    let bus: DBusConnection
    let store: SQLiteHealthStore
    let writer: StoreWriter
    let service: GatewayService
    let time: SimulatedTime
    let notifications: NotificationCounter

    final class Box<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    /// Simulation time, read by the central's clock: notifications are stamped with the time they were sent.
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

    /// Notifications the client received, by characteristic (a second listener on the central).
    final class NotificationCounter: Sendable {
        let counts = Mutex([BluetoothUUID: Int]())
    }

    func delivered(_ uuid: BluetoothUUID) -> Int { notifications.counts.withLock { $0[uuid] ?? 0 } }

    /// Runs `body` with everything started (the service only when `start`).
    static func run(
        _ scenario: FakeBlueZScenario, enrol: [(String, String)], start: Bool = true,
        _ body: (GatewayFixture) async throws -> Void
    ) async throws {
        let daemon = try await PrivateBus.start()
        defer { daemon.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        let bus = try await DBusConnection.connect(to: .address(daemon.address))
        let time = SimulatedTime()
        await fake.tick(to: time.now.withLock { $0 })
        let central = try await BlueZCentral.start(on: bus, clock: { time.timestamp() })
        let counter = NotificationCounter()
        let events = central.events()
        let counting = Task {
            for await event in events {
                if case .notification(let notification) = event {
                    counter.counts.withLock { $0[notification.characteristic, default: 0] += 1 }
                }
            }
        }
        defer { counting.cancel() }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        for (address, subject) in enrol {
            try await store.register(RegisteredSensor(address: address, subject: subject, enrolledAt: Instant.now))
        }
        let writer = StoreWriter(
            sink: HealthStoreSink(store: store), settings: .init(batchSize: 100, flushInterval: .milliseconds(50)))
        let settings = GatewayService.Settings(
            source: Source(identifier: "wearhouse", version: "test"), connectTimeout: .seconds(2),
            session: .init(watchdog: .seconds(2), resolveTimeout: .seconds(5)), backoffMinimum: .milliseconds(50),
            backoffMaximum: .milliseconds(500), timeZone: TimeZone(identifier: "UTC")!,
            statusInterval: .milliseconds(200), registryPollInterval: .milliseconds(100),
            tickInterval: .milliseconds(50))
        let service = GatewayService(
            central: central, registry: store, writer: writer, settings: settings,
            log: ServiceLog(level: .warning, destination: .standardError))
        let fixture = GatewayFixture(
            daemon: daemon, fakeBox: Box(fake), scenario: scenario, bus: bus, store: store, writer: writer,
            service: service, time: time, notifications: counter)
        do {
            if start { try await service.start() }
            try await body(fixture)
        } catch {
            await service.stop()
            await central.shutdown(disconnecting: [])
            await bus.close()
            await fixture.fake.stop()
            throw error
        }
        await service.stop()
        await central.shutdown(disconnecting: [])
        await bus.close()
        await fixture.fake.stop()
    }

    /// Advances the simulation one second at a time, stamping each second's notifications with its time.
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

    func status(_ address: String) async throws -> SensorStatus? {
        await service.statuses().first { $0.address == address }
    }

    func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ done: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !done() {
            guard ContinuousClock.now < deadline else {
                throw FakeBlueZError(message: "timed out waiting for \(what); statuses \(await service.statuses())")
            }
            // Sensors that are out of range still need the simulation to move (silence is measured in it).
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

    /// bluetoothd exits and a new one starts with the same devices.
    func restartBluetoothd() async throws {
        let old = fake
        await old.stop()
        let next = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        await next.tick(to: time.now.withLock { $0 })
        fakeBox.value.withLock { $0 = next }
    }

    func quantities(_ type: HealthType) async throws -> [QuantitySample] {
        var all: [QuantitySample] = []
        var cursor: SampleCursor?
        repeat {
            let page = try await store.samples(SampleQuery(type: type, limit: 1000, cursor: cursor), as: .owner)
            all += page.samples
            cursor = page.next
        } while cursor != nil
        return all
    }

    func series() async throws -> [HeartbeatSeriesSample] {
        try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
    }
}
