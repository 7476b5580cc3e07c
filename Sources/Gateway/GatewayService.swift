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
/// try await service.start()
/// ...
/// await service.stop()          // StopNotify, Disconnect managed sensors, flush the writer
/// ```
///
/// One actor owns all sessions; D-Bus calls run in child tasks whose results come back as state-machine events,
/// so a slow Connect on one sensor never holds up another's notifications.
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

        public init(
            source: Source, adapter: AdapterAddress? = nil, connectTimeout: Duration = .seconds(40),
            notifyMode: NotifyMode = .properties, session: SensorSessionState.Settings = .init(),
            backoffMinimum: Duration = .milliseconds(250), backoffMaximum: Duration = .seconds(60),
            samples: SampleBuilder.Settings = .init(), timeZone: TimeZone = .current,
            statusInterval: Duration = .seconds(10), registryPollInterval: Duration = .seconds(2),
            tickInterval: Duration = .milliseconds(250)
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
        }
    }

    /// The measurement characteristics a session subscribes to (whichever the sensor has).
    public static let measurements: [BluetoothUUID] = [
        .heartRateMeasurement, .rscMeasurement, .stepCounterActivitySummaryData, .infiniTimeStepCount,
    ]
    /// The services discovery looks for when a sensor's device object has gone (R14).
    public static let discoveryServices: [BluetoothUUID] = [
        .heartRateService, .runningSpeedAndCadenceService, .physicalActivityMonitorService,
        .infiniTimeMotionService,
    ]

    let central: any Central
    let registry: any SensorRegistry
    let writer: StoreWriter
    public let settings: Settings
    let log: ServiceLog
    let statusHook: (@Sendable (String) -> Void)?
    let observer: (any GatewayObserver)?
    let clock = ContinuousClock()
    let started: ContinuousClock.Instant
    var sensors: [String: SensorRuntime] = [:]
    var stackAvailable = false
    var defaultAdapter: AdapterAddress?
    var discovering = false
    /// The adapter last announced in the log.
    var announcedAdapter: AdapterAddress?
    var registryVersion: Int64?
    var lastRegistryPoll: Duration = .zero
    var lastStatus: Duration = .zero
    var notificationsSinceStatus = 0
    var consumer: Task<Void, Never>?
    var ticker: Task<Void, Never>?
    var lastEventAt = ContinuousClock.now
    /// Notifications taken from the central's events (for ``quiesce()``).
    var handledNotifications = 0
    /// `stop()` began: sessions are released, notifications already received are still stored.
    var stopping = false
    /// Everything is released; events are ignored.
    var stopped = false

    /// A service over `central`, reading enrolled sensors from `registry` and writing through `writer`.
    /// `status` receives a one-line summary every status interval (for sd_notify STATUS=).
    public init(
        central: any Central, registry: any SensorRegistry, writer: StoreWriter, settings: Settings, log: ServiceLog,
        status: (@Sendable (String) -> Void)? = nil, observer: (any GatewayObserver)? = nil
    ) {
        self.central = central
        self.registry = registry
        self.writer = writer
        self.settings = settings
        self.log = log
        self.statusHook = status
        self.observer = observer
        self.started = ContinuousClock.now
    }

    var now: Duration { clock.now - started }

    // MARK: Lifecycle

    /// Starts the writer, reads the registry, adopts what bluetoothd already has (R13) and starts every session.
    ///
    /// - Throws: what the registry throws when it cannot be read.
    public func start() async throws {
        await writer.start()
        let events = central.events()
        consumer = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
        await refreshStack()
        try await reloadRegistry()
        let interval = settings.tickInterval
        ticker = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                await self.tick()
            }
        }
        log.notice("started with \(sensors.count) sensor(s)")
    }

    /// R13 at stop: ends every session (StopNotify and Disconnect for connected ones), stores what was notified
    /// before (notifications already received are still built into samples), closes open heartbeat series,
    /// writes everything queued and the final statuses.
    public func stop() async {
        guard !stopping else { return }
        stopping = true
        ticker?.cancel()
        ticker = nil
        for address in sensors.keys.sorted() { await release(address) }
        await quiesce()
        stopped = true
        consumer?.cancel()
        consumer = nil
        for address in sensors.keys.sorted() { await finish(address) }
        if discovering { try? await central.stopDiscovery(on: defaultAdapter) }
        await writer.close()
        try? await registry.updateStatus(sensors.values.map(\.status))
        log.notice("stopped")
    }

    /// Waits (at most 2 s) until every notification the central has passed on was handled here and no event has
    /// arrived for 100 ms: notifications bluetoothd sent before StopNotify answered may still be on their way
    /// through the bus, the object cache and the event stream.
    func quiesce() async {
        let deadline = clock.now + .seconds(2)
        while clock.now < deadline {
            let forwarded = await central.statistics().notifications
            if forwarded <= handledNotifications, clock.now - lastEventAt >= .milliseconds(100) { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Re-reads the registry (SIGHUP, or the poll seeing a new version): new sensors start, forgotten ones stop,
    /// changed ones take their new subject, label and location.
    public func reloadRegistry() async throws {
        let version = try await registry.registryVersion()
        registryVersion = version
        let enrolled = try await registry.registeredSensors()
        let known = await peripheralsByAddress()
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
            let info = known[sensor.address]
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

    /// The sensors' current statuses.
    public func statuses() -> [SensorStatus] {
        sensors.values.map(\.status).sorted { $0.address < $1.address }
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
