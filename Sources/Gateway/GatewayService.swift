public import Foundation
public import GATT
public import Health
public import Support

/// The gateway: every enrolled sensor's session, driven by the central's events and a ticker, its samples
/// built and handed to the ``StoreWriter``; the registry watched for changes; statuses written back for
/// `wearhouse sensors`.
///
/// ```swift
/// let service = GatewayService(central: central, registry: store, writer: writer, settings: settings, log: log)
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask(operation: { try await service.run() })
///     ...
///     await service.stop()      // StopNotify, Disconnect managed sensors, flush the writer; run() returns
/// }
/// ```
///
/// One actor owns all sessions. ``run()`` owns every task the service starts, as children of its task group, in
/// this start order: the writer's loop, the event consumer, the actions (each connect, subscription, disconnect,
/// cache removal and submit is a child task whose result comes back as a state-machine event, so a slow Connect on
/// one sensor never holds up another's notifications), the ticker. Stopping cancels and awaits them in reverse
/// order. Every wait and every reading of the time is on the injected ``Support/Clock``.
public actor GatewayService {
    public struct Settings: Sendable {
        public var source: Source
        /// Use this adapter (its address); `nil` picks the first powered one (`docs/bluez.md`, R4).
        public var adapter: AdapterAddress?
        public var connectTimeout: Duration
        public var notifyMode: NotifyMode
        public var session: SensorSessionState.Settings
        public var backoffMinimum: Duration
        public var backoffMaximum: Duration
        public var samples: SampleBuilder.Settings
        public var timeZone: TimeZone
        public var statusInterval: Duration
        public var registryPollInterval: Duration
        public var tickInterval: Duration
        /// How often the store's retention is applied (the `prune` the service was made with): once when the
        /// service starts, then every interval (a day by default), on the service's clock.
        public var retentionInterval: Duration

        public init(
            source: Source, adapter: AdapterAddress? = nil, connectTimeout: Duration = .seconds(40),
            notifyMode: NotifyMode = .properties, session: SensorSessionState.Settings = .init(),
            backoffMinimum: Duration = .milliseconds(250), backoffMaximum: Duration = .seconds(60),
            samples: SampleBuilder.Settings = .init(), timeZone: TimeZone = .current,
            statusInterval: Duration = .seconds(10), registryPollInterval: Duration = .seconds(2),
            tickInterval: Duration = .milliseconds(250), retentionInterval: Duration = .seconds(86_400)
        ) {
            self.source = source
            self.adapter = adapter
            self.connectTimeout = connectTimeout
            self.notifyMode = notifyMode
            self.session = session
            self.backoffMinimum = backoffMinimum
            self.backoffMaximum = backoffMaximum
            self.samples = samples
            self.timeZone = timeZone
            self.statusInterval = statusInterval
            self.registryPollInterval = registryPollInterval
            self.tickInterval = tickInterval
            self.retentionInterval = max(retentionInterval, .seconds(1))
        }
    }

    /// The measurement characteristics a session subscribes to (whichever the sensor has).
    /// The health devices' results are indicated rather than notified; StartNotify subscribes to either.
    public static let measurements: [BluetoothUUID] = [
        .heartRateMeasurement, .rscMeasurement, .stepCounterActivitySummaryData, .infiniTimeStepCount,
        .weightMeasurement, .bodyCompositionMeasurement, .bloodPressureMeasurement, .intermediateCuffPressure,
        .temperatureMeasurement, .intermediateTemperature, .plxSpotCheckMeasurement, .plxContinuousMeasurement,
        .glucoseMeasurement, .glucoseMeasurementContext, .recordAccessControlPoint,
        .cyclingPowerMeasurement, .indoorBikeData, .treadmillData, .rowerData, .fitnessMachineStatus,
    ]
    /// The services discovery looks for when a sensor's device object has gone (R14).
    public static let discoveryServices: [BluetoothUUID] = [
        .heartRateService, .runningSpeedAndCadenceService, .physicalActivityMonitorService,
        .infiniTimeMotionService, .weightScaleService, .bodyCompositionService, .bloodPressureService,
        .healthThermometerService, .pulseOximeterService,
        .glucoseService,
        .cyclingPowerService, .fitnessMachineService,
    ]

    let central: any Central
    let registry: any SensorRegistry
    let writer: StoreWriter
    public let settings: Settings
    let log: ServiceLog
    let statusHook: (@Sendable (String) -> Void)?
    let observer: (any GatewayObserver)?
    let clock: any Support.Clock
    /// Applies the store's retention (`store prune`); `nil` when this service does not own the store's data.
    let prune: (@Sendable () async throws -> Int)?
    /// Retention passes done (``retentionPasses(atLeast:)``).
    var retentionPasses = 0
    var retentionWaiters: [(passes: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// The clock's reading at `init`: session times (``now``) count from it.
    let origin: Duration
    var sensors: [String: SensorRuntime] = [:]
    var stackAvailable = false
    var defaultAdapter: AdapterAddress?
    /// The adapters our discovery runs on.
    var discovering: Set<AdapterAddress> = []
    /// The adapter last announced in the log.
    var announcedAdapter: AdapterAddress?
    var registryVersion: Int64?
    var lastRegistryPoll: Duration = .zero
    var lastStatus: Duration = .zero
    var notificationsSinceStatus = 0
    var lastEventAt: Duration
    /// Notifications taken from the central's events (for ``quiesce()``).
    var handledNotifications = 0
    /// Events of every kind taken from the central (``settled(notifications:events:)``).
    var handledEvents = 0
    /// The central's counts (``GATT/CentralStatistics``) when ``run(started:)`` began to listen: events passed on
    /// before then went to other listeners only.
    var passedOnBeforeRun = (notifications: 0, events: 0)
    /// `stop()` began: sessions are released, notifications already received are still stored.
    var stopping = false
    /// Everything is released; events are ignored.
    var stopped = false
    /// Where ``perform(_:for:)`` queues the work that ``run()``'s children do (`nil` outside ``run()``).
    var jobs: AsyncStream<Job>.Continuation?
    /// Jobs queued or running.
    var jobsInFlight = 0
    /// Sensors with a Connect queued or running.
    var connecting: Set<String> = []
    /// Sensors whose Connect succeeded after the stop began: they are disconnected too.
    var connectedWhileStopping: Set<String> = []
    /// When the ticker wakes next (it has done every tick due before).
    var nextTick: Duration?
    var lifecycle = Lifecycle.idle
    let stopRequest = StopRequest()
    var finishedWaiters: [CheckedContinuation<Void, Never>] = []
    var settleWaiters: [(notifications: Int, events: Int, continuation: CheckedContinuation<Void, Never>)] = []

    enum Lifecycle {
        case idle, running, finished
    }

    /// A service over `central`, reading enrolled sensors from `registry` and writing through `writer`.
    /// `status` receives a one-line summary every status interval (for sd_notify STATUS=). `clock` is what the
    /// sessions, the ticker and every wait run on (the writer has its own: give both the same one). `prune`
    /// applies the store's retention when the service starts and then every ``Settings/retentionInterval``.
    public init(
        central: any Central, registry: any SensorRegistry, writer: StoreWriter, settings: Settings, log: ServiceLog,
        clock: any Support.Clock = SystemClock(), status: (@Sendable (String) -> Void)? = nil,
        observer: (any GatewayObserver)? = nil, prune: (@Sendable () async throws -> Int)? = nil
    ) {
        self.central = central
        self.registry = registry
        self.writer = writer
        self.settings = settings
        self.log = log
        self.clock = clock
        self.statusHook = status
        self.observer = observer
        self.prune = prune
        self.origin = clock.now
        self.lastEventAt = clock.now
    }

    /// Time since the service was made (the sessions' clock).
    var now: Duration { clock.now - origin }

    // MARK: Lifecycle

    /// Runs the service until ``stop()`` (or until the task is cancelled, which stops it the same way without
    /// waiting for quiet): starts the writer's loop, reads the registry, adopts what bluetoothd already has (R13),
    /// starts every session and the ticker, then calls `started`. Every task it starts is a child of this call.
    ///
    /// The stop, in the reverse order of the start (R13): the ticker ends; a Connect still pending in bluetoothd
    /// is cancelled with Disconnect (R7) and the actions are cancelled and awaited; every session is released
    /// (StopNotify on what it subscribed, Disconnect when connected or connecting); notifications already received
    /// (and any bluetoothd sent before a last round trip) are still built into samples (``quiesce()``) before the
    /// consumer ends; open heartbeat series are closed,
    /// everything queued is written, the writer's loop ends and the final statuses are written.
    ///
    /// - Throws: what the registry throws when it cannot be read at the start (the service stops then).
    public func run(started: @escaping @Sendable () -> Void = {}) async throws {
        guard lifecycle == .idle else { return }
        lifecycle = .running
        let events = central.events()
        // What the central passed on before we listened never reaches us; read after subscribing, so that the
        // counts compared with the central's (settled(), quiesce()) never wait for an event we cannot get.
        let before = await central.statistics()
        passedOnBeforeRun = (before.notifications, before.events)
        let (queue, input) = AsyncStream.makeStream(of: Job.self)
        jobs = input
        var failure: (any Error)?
        await withDiscardingTaskGroup { group in
            // 1. The writer's loop: started first, so that it is the last to end.
            group.addTask(operation: { await self.writer.run() })
            await withDiscardingTaskGroup { group in
                // 2. The event consumer.
                group.addTask(operation: { await self.consume(events) })
                await withDiscardingTaskGroup { group in
                    // 3. The actions: a child task each.
                    group.addTask(operation: { await self.runJobs(queue) })
                    do {
                        await refreshStack()
                        try await reloadRegistry()
                        await withDiscardingTaskGroup { group in
                            // 4. The ticker.
                            group.addTask(operation: { await self.runTicker() })
                            // 5. Retention, daily.
                            if let prune { group.addTask(operation: { await self.runRetention(prune) }) }
                            log.notice("started with \(sensors.count) sensor(s)")
                            started()
                            await stopRequest.wait()
                            stopping = true
                            group.cancelAll()
                        }
                    } catch {
                        failure = error
                        stopping = true
                    }
                    nextTick = nil
                    await cancelPendingConnects()
                    jobs = nil
                    input.finish()
                }
                for address in sensors.keys.sorted() { await release(address) }
                // A sensor whose link went down just before had no StopNotify to order its last values.
                await central.flushEvents()
                await quiesce()
                stopped = true
                group.cancelAll()
            }
            for address in sensors.keys.sorted() { await finish(address) }
            for adapter in discovering.sorted() { try? await central.stopDiscovery(on: adapter) }
            discovering = []
            await writer.close()
        }
        if failure == nil {
            try? await registry.updateStatus(sensors.values.map { $0.status(at: Instant.now(on: clock)) })
            log.notice("stopped")
        }
        lifecycle = .finished
        let waiters = finishedWaiters
        finishedWaiters = []
        for waiter in waiters { waiter.resume() }
        checkSettled()
        if let failure { throw failure }
    }

    /// Asks ``run()`` to stop (see there) and waits until it has; returns at once when it is not running.
    public func stop() async {
        stopRequest.request()
        guard lifecycle == .running else { return }
        await withCheckedContinuation { finishedWaiters.append($0) }
    }

    /// Asks ``run()`` to stop without waiting for it (a signal handler's call).
    public nonisolated func requestStop() {
        stopRequest.request()
    }

    /// Takes the central's events until cancelled.
    func consume(_ events: AsyncStream<CentralEvent>) async {
        for await event in events { await handle(event) }
    }

    /// Ticks every tick interval until cancelled.
    func runTicker() async {
        let interval = settings.tickInterval
        while true {
            let due = clock.now + interval
            nextTick = due
            checkSettled()
            do { try await clock.sleep(until: due) } catch { return }
            await tick()
        }
    }

    /// Applies the store's retention now and then every retention interval, until cancelled. A failed pass is
    /// logged and tried again at the next interval (pruning only deletes what is past its retention, so nothing
    /// is lost by waiting).
    func runRetention(_ prune: @Sendable () async throws -> Int) async {
        while !Task.isCancelled {
            do {
                let removed = try await prune()
                if removed > 0 { log.notice("retention: pruned \(removed) samples") }
            } catch {
                log.error("retention: cannot prune the store: \(error)")
            }
            retentionPasses += 1
            let ready = retentionWaiters.filter { $0.passes <= retentionPasses }
            retentionWaiters.removeAll { $0.passes <= retentionPasses }
            for waiter in ready { waiter.continuation.resume() }
            do { try await clock.sleep(until: clock.now + settings.retentionInterval) } catch { return }
        }
    }

    /// For tests: returns once the service has applied the retention `passes` times.
    public func retentionPasses(atLeast passes: Int) async {
        if retentionPasses >= passes { return }
        await withCheckedContinuation { retentionWaiters.append((passes, $0)) }
    }

    /// Waits (at most 2 s) until every notification the central has passed on was handled here and no event has
    /// arrived for 100 ms: notifications bluetoothd sent before StopNotify answered may still be on their way
    /// through the bus, the object cache and the event stream.
    func quiesce() async {
        let deadline = clock.now + .seconds(2)
        while clock.now < deadline {
            let forwarded = await central.statistics().notifications - passedOnBeforeRun.notifications
            if forwarded <= handledNotifications, clock.now - lastEventAt >= .milliseconds(100) { return }
            do { try await clock.sleep(for: .milliseconds(20)) } catch { return }
        }
    }

    // MARK: Settling (tests)

    /// For tests on a ``Support/ManualClock``: returns once the service has handled the central's notifications
    /// and events of every kind up to the counts given (``GATT/CentralStatistics``: `notifications`, `events`; what
    /// the central passed on before ``run(started:)`` listened is not waited for), no action is queued or running,
    /// and the ticker has done every tick due by the clock's present. The test then knows that moving the clock is
    /// what happens next. Before the run and after it there is nothing to wait for.
    public func settled(notifications: Int = 0, events: Int = 0) async {
        if isSettled(notifications, events) { return }
        await withCheckedContinuation { settleWaiters.append((notifications, events, $0)) }
    }

    func isSettled(_ notifications: Int, _ events: Int) -> Bool {
        guard lifecycle == .running else { return true }
        guard handledNotifications >= notifications - passedOnBeforeRun.notifications,
            handledEvents >= events - passedOnBeforeRun.events, jobsInFlight == 0
        else { return false }
        guard !stopping, let nextTick else { return true }
        return clock.now < nextTick
    }

    func checkSettled() {
        guard !settleWaiters.isEmpty else { return }
        var waiting: [(notifications: Int, events: Int, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in settleWaiters {
            if isSettled(waiter.notifications, waiter.events) {
                waiter.continuation.resume()
            } else {
                waiting.append(waiter)
            }
        }
        settleWaiters = waiting
    }

    /// Re-reads the registry (SIGHUP, or the poll seeing a new version): new sensors start, forgotten ones stop,
    /// changed ones take their new subject, label and location.
    public func reloadRegistry() async throws {
        let version = try await registry.registryVersion()
        registryVersion = version
        let enrolled = try await registry.registeredSensors()
        let known = await knownPeripherals()
        for sensor in enrolled {
            if var runtime = sensors[sensor.address] {
                runtime.registered = sensor
                runtime.builder.context = context(for: sensor, updating: runtime.builder.context)
                sensors[sensor.address] = runtime
                continue
            }
            var backoff = Backoff(
                minimum: settings.backoffMinimum, maximum: settings.backoffMaximum, seed: Self.seed(sensor.address))
            _ = backoff.delay(attempt: 0)
            let runtime = SensorRuntime(
                registered: sensor, state: SensorSessionState(settings: settings.session, backoff: backoff),
                builder: SampleBuilder(context: context(for: sensor, updating: nil), settings: settings.samples))
            sensors[sensor.address] = runtime
            log.info("sensor \(address: sensor.address) enrolled", fields: [.sensor(sensor.address)])
            let info = peripheral(of: runtime, among: known)
            deliver(
                .start(
                    deviceKnown: stackAvailable && info != nil, connected: info?.connected ?? false,
                    resolved: info?.servicesResolved ?? false), to: sensor.address)
        }
        let addresses = Set(enrolled.map(\.address))
        for address in sensors.keys.sorted() where !addresses.contains(address) {
            log.info("sensor \(address: address) forgotten", fields: [.sensor(address)])
            await release(address)
            await finish(address)
            sensors[address] = nil
        }
    }

    /// SIGHUP: re-reads the configuration file the service was started with (`required` when it was named on the
    /// command line; `overrides` applied again, so that `--set` still wins) for the log level, then the registry.
    /// A file that no longer reads leaves the log level as it was. Returns the configuration read, `nil` when it
    /// did not read, for the caller's part of a reload (the store's priorities).
    @discardableResult
    public func reload(configurationAt path: String, required: Bool, overrides: [String: String]) async
        -> GatewayConfiguration?
    {
        var reloaded: GatewayConfiguration?
        do {
            let configuration = try GatewayConfiguration.load(path: path, required: required)
                .applying(overrides: overrides)
            log.level = configuration.service.logLevel
            log.notice("reloaded \(path) (log level \(configuration.service.logLevel))")
            reloaded = configuration
        } catch {
            log.error("cannot reload \(path): \(error)")
        }
        do {
            try await reloadRegistry()
            log.notice("registry reloaded")
        } catch {
            log.error("cannot reload the registry: \(error)")
        }
        return reloaded
    }

    /// The sensors' current statuses.
    public func statuses() -> [SensorStatus] {
        let at = Instant.now(on: clock)
        return sensors.values.map { $0.status(at: at) }.sorted { $0.address < $1.address }
    }

    /// Counters of the writer, for the demo and the benchmark.
    public func writerCounters() async -> StoreWriter.Counters { await writer.counters }
}

/// Sees what the service sees, in order (the trace recorder): a sensor's context each time it starts streaming,
/// connection changes, and every notification before it is built into samples. Called on the service's actor:
/// return quickly.
public protocol GatewayObserver: Sendable {
    func sensorReady(address: String, context: SensorContext, characteristics: [BluetoothUUID])
    func connectionChanged(address: String, connected: Bool)
    /// The session stopped trusting its notifications' continuity (link lost, bluetoothd gone, services being
    /// resolved again, the watchdog): open heartbeat series were closed here, even without a disconnection.
    func linkLost(address: String)
    func notification(_ notification: GATTNotification)
}

extension GatewayObserver {
    public func linkLost(address: String) {}
}
