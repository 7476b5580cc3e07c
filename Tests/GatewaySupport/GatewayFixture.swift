public import BlueZ
public import FakeDevices
public import Foundation
public import GATT
public import Gateway
public import Health
public import SQLiteStore
import Support
public import Synchronization
public import TestSupport

/// A private bus with FakeBlueZ, the production BlueZ client on a simulated clock, a store in a temporary
/// folder, and the gateway service over them.
public struct GatewayFixture {
    public let daemon: PrivateBus
    public var fake: FakeBlueZ { fakeBox.value.withLock { $0 } }
    public let fakeBox: Box<FakeBlueZ>
    public let scenario: FakeBlueZScenario
    public let bus: DBusConnection
    public let store: SQLiteHealthStore
    public let writer: StoreWriter
    public let service: GatewayService
    public let time: SimulatedTime
    public let notifications: NotificationCounter

    public final class Box<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    /// Simulation time, read by the central's clock: notifications are stamped with the time they were sent.
    public final class SimulatedTime: Sendable {
        public let now = Mutex(Duration.seconds(1))
        public let wallStart: Int64 = 1_795_946_400_000_000
        public func timestamp() -> Timestamp {
            let now = self.now.withLock { $0 }
            let (seconds, attoseconds) = now.components
            return Timestamp(
                monotonic: now, wallMicroseconds: wallStart + seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        }
    }

    /// Notifications the client received, by characteristic (a second listener on the central).
    public final class NotificationCounter: Sendable {
        public let counts = Mutex([BluetoothUUID: Int]())
    }

    public func delivered(_ uuid: BluetoothUUID) -> Int { notifications.counts.withLock { $0[uuid] ?? 0 } }

    /// What a suite may change: the sample builder's settings, the time zone samples are tagged with, and an
    /// observer made for the run (it gets the run's folder and simulated time).
    public struct Options {
        public var samples = SampleBuilder.Settings()
        public var timeZone = TimeZone(identifier: "UTC")!
        public var observer: ((URL, SimulatedTime) throws -> any GatewayObserver)?

        public init(
            samples: SampleBuilder.Settings = .init(), timeZone: TimeZone = TimeZone(identifier: "UTC")!,
            observer: ((URL, SimulatedTime) throws -> any GatewayObserver)? = nil
        ) {
            self.samples = samples
            self.timeZone = timeZone
            self.observer = observer
        }
    }

    /// The run's temporary folder (the store is `health.db` in it).
    public let directory: URL
    /// The observer the options made, if any.
    public let observer: (any GatewayObserver)?

    /// Runs `body` with everything started (the service only when `start`).
    public static func run(
        _ scenario: FakeBlueZScenario, enrol: [(String, String)], start: Bool = true, options: Options = Options(),
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
            backoffMaximum: .milliseconds(500), samples: options.samples, timeZone: options.timeZone,
            statusInterval: .milliseconds(200), registryPollInterval: .milliseconds(100),
            tickInterval: .milliseconds(50))
        let observer = try options.observer?(directory, time)
        let service = GatewayService(
            central: central, registry: store, writer: writer, settings: settings,
            log: ServiceLog(level: .warning, destination: .standardError), observer: observer)
        let fixture = GatewayFixture(
            daemon: daemon, fakeBox: Box(fake), scenario: scenario, bus: bus, store: store, writer: writer,
            service: service, time: time, notifications: counter, directory: directory, observer: observer)
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
    ///
    /// The central stamps a notification with the simulated time when it receives it, so each second waits until
    /// the client has received everything FakeBlueZ delivered in it (at most 5 s), however busy the machine is:
    /// otherwise two seconds' values could share an instant.
    public func run(seconds: Int) async throws {
        for _ in 0..<seconds {
            let next = time.now.withLock { now in
                now += .seconds(1)
                return now
            }
            await fake.tick(to: next)
            var sent = 0
            for peripheral in scenario.peripherals {
                sent += await fake.deliveredNotifications(of: peripheral.address).count
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while receivedNotifications < sent, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Every notification the client received so far.
    public var receivedNotifications: Int { notifications.counts.withLock { $0.values.reduce(0, +) } }

    public func status(_ address: String) async throws -> SensorStatus? {
        await service.statuses().first { $0.address == address }
    }

    public func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ done: () async throws -> Bool)
        async throws
    {
        let deadline = ContinuousClock.now + timeout
        while try await !done() {
            guard ContinuousClock.now < deadline else {
                throw FakeBlueZError(message: "timed out waiting for \(what); statuses \(await service.statuses())")
            }
            // Sensors that are out of range still need the simulation to move (silence is measured in it).
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public func waitUntilStreaming(_ addresses: [String]) async throws {
        try await waitUntil("streaming \(addresses)") {
            let statuses = await service.statuses()
            return addresses.allSatisfy { address in
                statuses.contains { $0.address == address && $0.state == "streaming" }
            }
        }
    }

    /// bluetoothd exits and a new one starts with the same devices.
    public func restartBluetoothd() async throws {
        let old = fake
        await old.stop()
        let next = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        await next.tick(to: time.now.withLock { $0 })
        fakeBox.value.withLock { $0 = next }
    }

    public func quantities(_ type: HealthType) async throws -> [QuantitySample] {
        var all: [QuantitySample] = []
        var cursor: SampleCursor?
        repeat {
            let page = try await store.samples(SampleQuery(type: type, limit: 1000, cursor: cursor), as: .owner)
            all += page.samples
            cursor = page.next
        } while cursor != nil
        return all
    }

    public func series() async throws -> [HeartbeatSeriesSample] {
        try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
    }
}
