internal import BlueZ
public import DBus
public import FakeDevices
public import Foundation
public import GATT
public import Gateway
public import Health
public import SQLiteStore
public import Support
public import Synchronization
public import TestSupport

/// A private bus with FakeBlueZ, the production BlueZ client, a store in a temporary folder, and the gateway
/// service over them, all on one ``Support/ManualClock``: the service's sessions, ticker and waits, the writer's
/// flushes, the central's notification stamps and FakeBlueZ's simulation move only when the test moves the clock
/// (``advance(by:)``, ``run(seconds:)``, ``waitUntil(_:timeout:_:)``), and each move waits until what it set off
/// has been handled: no test sleeps to order events.
public struct GatewayFixture {
    public let daemon: PrivateBus
    public var fake: FakeBlueZ { fakeBox.value.withLock { $0 } }
    public let fakeBox: Box<FakeBlueZ>
    public let scenario: FakeBlueZScenario
    public let bus: DBusConnection
    public let store: SQLiteHealthStore
    public let writer: StoreWriter
    public let service: GatewayService
    let central: BlueZCentral
    /// The one clock (monotonic time starts at 1 s, the wall clock at 2026-11-29T08:00:00Z).
    public let clock: ManualClock
    public let notifications: NotificationCounter
    /// Notifications delivered by the FakeBlueZ instances replaced by ``restartBluetoothd()``.
    let deliveredBefore: Box<Int>
    let gate: Gate
    let started: Gate

    public final class Box<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    /// Opens once; every waiter (and every later one) goes on. Cancelling a waiter ends its wait.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [Int: CheckedContinuation<Void, Never>], next: Int)>(
            (false, [:], 0))

        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }

        func wait() async {
            let id = state.withLock { state in
                state.next += 1
                return state.next
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state in
                        if state.open || Task.isCancelled { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }

    /// Notifications the client received, by characteristic (a second listener on the central); a test can wait
    /// for a number of them.
    public final class NotificationCounter: Sendable {
        public let counts = Mutex([BluetoothUUID: Int]())
        private let waiters = Mutex<[(count: Int, continuation: CheckedContinuation<Void, Never>)]>([])

        var total: Int { counts.withLock { $0.values.reduce(0, +) } }

        func count(_ notification: GATTNotification) {
            let total = counts.withLock { counts in
                counts[notification.characteristic, default: 0] += 1
                return counts.values.reduce(0, +)
            }
            let ready = waiters.withLock { waiters in
                let ready = waiters.filter { $0.count <= total }
                waiters.removeAll { $0.count <= total }
                return ready
            }
            for waiter in ready { waiter.continuation.resume() }
        }

        /// Returns once `count` notifications were received in all.
        func wait(atLeast count: Int) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = waiters.withLock { waiters in
                    if total >= count { return true }
                    waiters.append((count, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    public func delivered(_ uuid: BluetoothUUID) -> Int { notifications.counts.withLock { $0[uuid] ?? 0 } }

    /// What a suite may change: the sample builder's settings, the time zone samples are tagged with, and an
    /// observer made for the run (it gets the run's folder and the clock; a ``LifecycleService`` observer, the
    /// trace recorder, runs beside the service).
    public struct Options {
        public var samples = SampleBuilder.Settings()
        public var timeZone = TimeZone(identifier: "UTC")!
        public var observer: ((URL, ManualClock) throws -> any GatewayObserver)?

        public init(
            samples: SampleBuilder.Settings = .init(), timeZone: TimeZone = TimeZone(identifier: "UTC")!,
            observer: ((URL, ManualClock) throws -> any GatewayObserver)? = nil
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
    /// The service's tick interval: what ``waitUntil(_:timeout:_:)`` moves the clock by at a time.
    public static let tick = Duration.milliseconds(50)

    /// Runs `body` with everything started (the service only when `start`; otherwise ``start()`` starts it). The
    /// service's ``GatewayService/run(started:)``, the observer's run and the event counter are child tasks of
    /// this call.
    public static func run(
        _ scenario: FakeBlueZScenario, enrol: [(String, String)], start: Bool = true, options: Options = Options(),
        _ body: (GatewayFixture) async throws -> Void
    ) async throws {
        let daemon = try await PrivateBus.start()
        defer { daemon.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock(wallMicroseconds: 1_795_946_400_000_000)
        clock.advance(to: .seconds(1))
        let fake = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        let bus = try await DBusConnection.connect(to: .address(daemon.address))
        await fake.tick(to: clock.now)
        let central = try await BlueZCentral.start(on: bus, clock: { Timestamp(reading: clock) })
        let counter = NotificationCounter()
        let events = central.events()
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        for (address, subject) in enrol {
            try await store.register(
                RegisteredSensor(address: address, subject: subject, enrolledAt: Instant.now(on: clock)))
        }
        let writer = StoreWriter(
            sink: HealthStoreSink(store: store), settings: .init(batchSize: 100, flushInterval: .milliseconds(50)),
            clock: clock)
        let settings = GatewayService.Settings(
            source: Source(identifier: "wearhouse", version: "test"), connectTimeout: .seconds(2),
            session: .init(watchdog: .seconds(2), resolveTimeout: .seconds(5)), backoffMinimum: .milliseconds(50),
            backoffMaximum: .milliseconds(500), samples: options.samples, timeZone: options.timeZone,
            statusInterval: .milliseconds(200), registryPollInterval: .milliseconds(100), tickInterval: tick)
        let observer = try options.observer?(directory, clock)
        let service = GatewayService(
            central: central, registry: store, writer: writer, settings: settings,
            log: ServiceLog(level: .warning, destination: .standardError), clock: clock, observer: observer)
        let fixture = GatewayFixture(
            daemon: daemon, fakeBox: Box(fake), scenario: scenario, bus: bus, store: store, writer: writer,
            service: service, central: central, clock: clock, notifications: counter, deliveredBefore: Box(0),
            gate: Gate(),
            started: Gate(), directory: directory, observer: observer)
        var failure: (any Error)?
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                for await event in events {
                    if case .notification(let notification) = event { counter.count(notification) }
                }
            }
            let gate = fixture.gate
            let started = fixture.started
            group.addTask {
                await gate.wait()
                guard !Task.isCancelled else { return }
                try await service.run { started.open() }
            }
            if let recorder = observer as? any LifecycleService {
                group.addTask { try await recorder.run {} }
            }
            do {
                if start { await fixture.start() }
                try await body(fixture)
            } catch {
                failure = error
            }
            await fixture.stop()
            (observer as? any LifecycleService)?.requestStop()
            group.cancelAll()
        }
        await central.shutdown(disconnecting: [])
        await bus.close()
        await fixture.fake.stop()
        if let failure { throw failure }
    }

    /// Starts the service (when the fixture was run with `start: false`) and returns once it is up.
    public func start() async {
        gate.open()
        await started.wait()
    }

    /// Stops the service (``GatewayService/stop()``: R13's release, quiet, flush), moving the clock whenever
    /// the stop waits on it (the wait for quiet; the observer's flush timer sleeps all along).
    public func stop() async {
        let clock = self.clock
        let others = observer is any LifecycleService ? 1 : 0
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    await clock.waitForSleepers(others + 1)
                    guard !Task.isCancelled else { return }
                    clock.advanceToNextDeadline()
                }
            }
            await service.stop()
            group.cancelAll()
        }
    }

    /// Moves the clock by `duration`, and FakeBlueZ's simulation with it when `simulation` (it sends what its
    /// peripherals produced meanwhile), then waits until the client has received every notification FakeBlueZ
    /// delivered, the service has handled them, no action of the service is running and its ticker has done the
    /// ticks due.
    public func advance(by duration: Duration, simulation: Bool = true) async {
        clock.advance(by: duration)
        let fake = self.fake
        if simulation { await fake.advance(by: duration) }
        var sent = deliveredBefore.value.withLock { $0 }
        for peripheral in scenario.peripherals {
            sent += await fake.deliveredNotifications(of: peripheral.address).count
        }
        await notifications.wait(atLeast: sent)
        await settle()
    }

    /// Waits until nothing more happens at the clock's present: the service's actions are done, FakeBlueZ ran what
    /// they set off past their replies (``FakeDevices/FakeBlueZ/idle()``), every signal it sent came through the
    /// client (a round trip and the object cache's drain, ``BlueZ/BlueZCentral/flushEvents()``), and the service
    /// handled every event passed on; again until a round brings no new event. Without it a disconnection's
    /// `Connected=false` could reach the service seconds of the manual clock late, after the next `Connect` (a
    /// scale then never streamed again in 3 runs of 5).
    func settle() async {
        var passedOn = -1
        for _ in 0..<100 {
            await service.settled(notifications: notifications.total)
            await fake.idle()
            await central.flushEvents()
            let events = await central.statistics().events
            if events == passedOn { return }
            passedOn = events
            await service.settled(notifications: notifications.total, events: events)
        }
    }

    /// Advances the simulation one second at a time (see ``advance(by:)``): each second's notifications are
    /// stamped with its time.
    public func run(seconds: Int) async throws {
        for _ in 0..<seconds { await advance(by: .seconds(1)) }
    }

    /// Every notification the client received so far.
    public var receivedNotifications: Int { notifications.total }

    /// The events the central passed on to its listeners so far, once every signal sent before this call came
    /// through (``BlueZ/BlueZCentral/flushEvents()``).
    public func passedOnEvents() async -> Int {
        await central.flushEvents()
        return await central.statistics().events
    }

    public func status(_ address: String) async throws -> SensorStatus? {
        await service.statuses().first { $0.address == address }
    }

    /// Moves the service's clock a tick at a time (``advance(by:simulation:)``, the peripherals' simulation
    /// standing still: silence is what the watchdog measures) until `done`; fails after `timeout` of the clock.
    /// Between two ticks the other processes (dbus-daemon, a restarting FakeBlueZ) get 5 ms of real time: a pace
    /// for the loop, not an ordering (each tick still waits until what it set off was handled).
    public func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ done: () async throws -> Bool)
        async throws
    {
        var waited = Duration.zero
        while try await !done() {
            guard waited < timeout else {
                throw FakeBlueZError(message: "timed out waiting for \(what); statuses \(await service.statuses())")
            }
            await advance(by: Self.tick, simulation: false)
            waited += Self.tick
            try await SystemClock().sleep(for: .milliseconds(5))
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
        var delivered = 0
        for peripheral in scenario.peripherals {
            delivered += await old.deliveredNotifications(of: peripheral.address).count
        }
        let simulated = await old.now
        await old.stop()
        let next = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        await next.tick(to: simulated)
        deliveredBefore.value.withLock { $0 += delivered }
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
