public import Foundation
public import GATT
public import Health

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
        /// Use this adapter (its address); `nil` picks the first powered one (R4).
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
    private func quiesce() async {
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

    // MARK: Events

    func handle(_ event: CentralEvent) async {
        guard !stopped else { return }
        lastEventAt = clock.now
        if stopping {
            guard case .notification = event else { return }
        }
        switch event {
        case .stackAvailable, .adapterAdded:
            await refreshStack()
        case .stackUnavailable:
            log.warning("bluetoothd went away; waiting for it")
            stackAvailable = false
            discovering = false
            for address in sensors.keys.sorted() { deliver(.stackUnavailable, to: address) }
        case .adapterRemoved(let adapter):
            log.warning("adapter \(address: adapter) removed", fields: [.adapter(adapter)])
            if defaultAdapter == adapter { defaultAdapter = nil }
            discovering = false
            for (address, runtime) in sensors where runtime.peripheral(defaultAdapter: adapter)?.adapter == adapter {
                deliver(.stackUnavailable, to: address)
            }
            await refreshStack()
        case .peripheralRemoved(let id):
            forEachSensor(matching: id) { deliver(.stackUnavailable, to: $0) }
        case .discovered(let info):
            forEachSensor(matching: info.id) { address in
                guard sensors[address]?.state.phase == .waitingForStack, stackAvailable else { return }
                sensors[address]?.adapter = info.id.adapter
                deliver(.stackAvailable, to: address)
            }
        case .connectionChanged(let id, let connected):
            forEachSensor(matching: id) { address in
                observer?.connectionChanged(address: address, connected: connected)
                deliver(.connected(connected), to: address)
            }
        case .servicesResolved(let id, let resolved):
            forEachSensor(matching: id) { deliver(.servicesResolved(resolved), to: $0) }
        case .notification(let notification):
            handledNotifications += 1
            guard let address = sensors.first(where: { $0.value.matches(notification.peripheral) })?.key,
                var runtime = sensors[address]
            else { return }
            runtime.notifications += 1
            notificationsSinceStatus += 1
            observer?.notification(notification)
            let output = runtime.builder.add(notification)
            let actions = runtime.state.handle(.notification, now: now)
            if !output.isEmpty {
                runtime.samples += Int64(output.count)
                runtime.lastSampleAt = output.quantities.last?.end ?? output.series.last?.end
            }
            sensors[address] = runtime
            perform(actions, for: address)
            await writer.submit(output.quantities, output.series, receivedAt: notification.receivedAt.monotonic)
        }
    }

    private func forEachSensor(matching id: PeripheralID, _ body: (String) -> Void) {
        for (address, runtime) in sensors where runtime.matches(id) { body(address) }
    }

    /// Re-reads adapters and devices after bluetoothd or an adapter came (back).
    func refreshStack() async {
        do {
            let adapters = try await central.adapters()
            let chosen =
                settings.adapter.flatMap { wanted in adapters.first { $0.address == wanted.uppercased() } }
                ?? adapters.first { $0.powered && $0.supportsCentral }
            stackAvailable = true
            defaultAdapter = chosen?.address
        } catch {
            stackAvailable = false
            defaultAdapter = nil
            return
        }
        guard let adapter = defaultAdapter else {
            log.warning("no powered adapter; waiting for one")
            return
        }
        if adapter != announcedAdapter {
            announcedAdapter = adapter
            // libudev names the hardware behind bluetoothd's adapter (when it is on this machine).
            let name = (try? await central.adapters())?.first { $0.address == adapter }?.name
            let hardware = name.flatMap(Doctor.adapterHardware) ?? "not a local controller"
            log.notice("using adapter \(name ?? "?") \(address: adapter) (\(hardware))", fields: [.adapter(adapter)])
        }
        let known = await peripheralsByAddress()
        for (address, runtime) in sensors where runtime.state.phase == .waitingForStack {
            guard let info = known[address] else { continue }
            sensors[address]?.adapter = info.id.adapter
            deliver(.stackAvailable, to: address)
            if info.connected { deliver(.connected(true), to: address) }
            if info.servicesResolved { deliver(.servicesResolved(true), to: address) }
        }
    }

    private func peripheralsByAddress() async -> [String: PeripheralInfo] {
        guard let known = try? await central.knownPeripherals() else { return [:] }
        var result: [String: PeripheralInfo] = [:]
        for info in known where settings.adapter.map({ $0.uppercased() == info.id.adapter }) ?? true {
            if result[info.id.address] == nil || info.id.adapter == defaultAdapter { result[info.id.address] = info }
        }
        return result
    }

    // MARK: The ticker

    func tick() async {
        guard !stopped else { return }
        let now = self.now
        for address in sensors.keys.sorted() { deliver(.tick, to: address) }
        await manageDiscovery()
        if now - lastRegistryPoll >= settings.registryPollInterval {
            lastRegistryPoll = now
            if let version = try? await registry.registryVersion(), version != registryVersion {
                try? await reloadRegistry()
            }
        }
        if now - lastStatus >= settings.statusInterval {
            let elapsed = now - lastStatus
            lastStatus = now
            await reportStatus(over: elapsed)
        }
    }

    /// R14: discovery runs only while a sensor's device object is missing and bluetoothd is there.
    private func manageDiscovery() async {
        let waiting = sensors.values.contains { $0.state.phase == .waitingForStack }
        if waiting, stackAvailable, defaultAdapter != nil, !discovering {
            do {
                try await central.startDiscovery(services: Self.discoveryServices, on: defaultAdapter)
                discovering = true
            } catch {
                log.debug("discovery could not start: \(error)")
            }
        } else if !waiting, discovering {
            discovering = false
            try? await central.stopDiscovery(on: defaultAdapter)
        }
    }

    private func reportStatus(over elapsed: Duration) async {
        let statuses = sensors.values.map(\.status)
        do {
            try await registry.updateStatus(statuses)
        } catch {
            log.warning("could not write sensor statuses: \(error)")
        }
        let streaming = sensors.values.filter { $0.state.phase == .streaming }.count
        let minutes = Double(elapsed.components.seconds) / 60
        let rate = minutes > 0 ? Int((Double(notificationsSinceStatus) / minutes).rounded()) : 0
        notificationsSinceStatus = 0
        statusHook?("\(streaming)/\(sensors.count) sensors streaming, \(rate) notifications/min")
    }

    // MARK: Actions

    func deliver(_ event: SensorSessionState.Event, to address: String) {
        guard var runtime = sensors[address] else { return }
        let before = runtime.state.phase
        let actions = runtime.state.handle(event, now: now)
        sensors[address] = runtime
        if runtime.state.phase != before {
            log.debug(
                "sensor \(address: address): \(before.name) -> \(runtime.state.phase.name)", fields: [.sensor(address)])
        }
        perform(actions, for: address)
    }

    func perform(_ actions: [SensorSessionState.Action], for address: String) {
        for action in actions {
            guard let runtime = sensors[address] else { return }
            let id = runtime.peripheral(defaultAdapter: defaultAdapter)
            switch action {
            case .connect:
                guard let id else {
                    deliver(.connectFailed(.unavailable), to: address)
                    continue
                }
                let central = self.central
                let timeout = settings.connectTimeout
                Task {
                    do throws(CentralError) {
                        try await central.connect(id, timeout: timeout)
                        self.deliver(.connectSucceeded, to: address)
                    } catch {
                        self.connectFailed(error, address: address)
                    }
                }
            case .subscribe:
                guard let id else { continue }
                let central = self.central
                let registered = runtime.registered
                // AcquireNotify when the sensor was enrolled for it or the service is configured for it (R11).
                let mode: NotifyMode = registered.notifyMode == .acquired ? .acquired : settings.notifyMode
                Task {
                    let result = await Self.subscribe(id, registered: registered, mode: mode, central: central)
                    self.subscribed(result, address: address)
                }
            case .disconnect:
                guard let id else { continue }
                let central = self.central
                Task { try? await central.disconnect(id) }
            case .removeDevice:
                guard let id else { continue }
                log.notice("sensor \(address: address): layout changed; removing its cache", fields: [.sensor(address)])
                let central = self.central
                Task { try? await central.remove(id) }
            case .linkLost:
                sensors[address]?.subscribed = []
                guard var builder = sensors[address]?.builder else { continue }
                let output = builder.linkLost()
                sensors[address]?.builder = builder
                if !output.isEmpty {
                    sensors[address]?.samples += Int64(output.count)
                    let writer = self.writer
                    Task { await writer.submit(output.quantities, output.series) }
                }
            case .release:
                break  // stop() releases inline, so that it finishes before the process ends
            }
        }
    }

    private func connectFailed(_ error: CentralError, address: String) {
        log.info("sensor \(address: address): \(error)", fields: [.sensor(address)])
        deliver(.connectFailed(error.kind), to: address)
    }

    /// Stops one session (R13): StopNotify on what it subscribed, and Disconnect when connected.
    private func release(_ address: String) async {
        guard var runtime = sensors[address] else { return }
        let actions = runtime.state.handle(.stop, now: now)
        sensors[address] = runtime
        guard actions.contains(.release), let id = runtime.peripheral(defaultAdapter: defaultAdapter) else { return }
        for characteristic in runtime.subscribed {
            try? await central.stopNotifications(characteristic, of: id)
        }
        try? await central.disconnect(id)
    }

    /// Closes what the builder still holds (the open heartbeat series) and queues it.
    private func finish(_ address: String) async {
        guard var builder = sensors[address]?.builder else { return }
        let output = builder.finish()
        sensors[address]?.builder = builder
        sensors[address]?.samples += Int64(output.count)
        await writer.submit(output.quantities, output.series)
    }

    // MARK: Subscribing

    struct Subscription: Sendable {
        var subscribed: [CharacteristicInfo] = []
        var metadata = SensorMetadata()
        var failure: CentralError?
        var servicesChanged = false
    }

    /// Looks the characteristics up by UUID (R12), reads the sensor's metadata, and starts notifications on
    /// every measurement characteristic (R11).
    static func subscribe(
        _ id: PeripheralID, registered: RegisteredSensor, mode: NotifyMode, central: any Central
    ) async -> Subscription {
        var result = Subscription()
        let characteristics: [CharacteristicInfo]
        do throws(CentralError) {
            characteristics = try await central.characteristics(of: id)
        } catch {
            result.failure = error
            return result
        }
        result.metadata = await SensorMetadata.read(from: id, characteristics: characteristics, central: central)
        let found = characteristics.filter {
            Self.measurements.contains($0.uuid) && !$0.properties.isDisjoint(with: [.notify, .indicate])
        }
        guard !found.isEmpty else {
            result.servicesChanged = true
            result.failure = CentralError(
                .other, operation: "Characteristics", detail: "no measurement characteristic after resolving services")
            return result
        }
        for characteristic in found {
            do throws(CentralError) {
                try await central.startNotifications(characteristic, of: id, mode: mode)
                result.subscribed.append(characteristic)
            } catch {
                result.failure = error
                return result
            }
        }
        return result
    }

    private func subscribed(_ result: Subscription, address: String) {
        guard var runtime = sensors[address] else { return }
        if let failure = result.failure {
            log.info("sensor \(address: address): \(failure)", fields: [.sensor(address)])
            deliver(.subscribeFailed(failure.kind, servicesChanged: result.servicesChanged), to: address)
            return
        }
        let metadata = result.metadata
        if let refusal = metadata.refusal {
            log.warning(
                "sensor \(address: address) refuses reads (\(refusal)); pair it again with 'wearhouse pair'",
                fields: [.sensor(address)])
        }
        runtime.subscribed = result.subscribed
        runtime.battery = metadata.batteryPercent ?? runtime.battery
        var context = runtime.builder.context
        context.device = metadata.device(
            name: runtime.registered.label ?? runtime.registered.name, address: address,
            fallback: runtime.registered.device)
        if Self.bodyLocation(runtime.registered.location) == nil, let read = metadata.bodySensorLocation {
            context.bodySensorLocation = read
        }
        if Self.rscLocation(runtime.registered.location) == nil, let read = metadata.sensorLocation {
            context.sensorLocation = read
        }
        context.reportsWalkingOrRunning = metadata.reportsWalkingOrRunning
        runtime.builder.context = context
        sensors[address] = runtime
        observer?.sensorReady(address: address, context: context, characteristics: result.subscribed.map(\.uuid))
        log.info(
            "sensor \(address: address) streaming (\(result.subscribed.count) characteristic(s))",
            fields: [.sensor(address)])
        deliver(.subscribed, to: address)
    }

    // MARK: Context

    func context(for sensor: RegisteredSensor, updating previous: SensorContext?) -> SensorContext {
        var context =
            previous
            ?? SensorContext(
                source: settings.source,
                device: Device(
                    name: sensor.label ?? sensor.name, manufacturer: sensor.device?.manufacturer,
                    model: sensor.device?.model, hardwareVersion: sensor.device?.hardwareVersion,
                    firmwareVersion: sensor.device?.firmwareVersion, softwareVersion: sensor.device?.softwareVersion,
                    serialNumber: sensor.device?.serialNumber, localIdentifier: sensor.address),
                timeZone: settings.timeZone)
        context.subject = sensor.subject
        if let location = Self.bodyLocation(sensor.location) { context.bodySensorLocation = location }
        if let location = Self.rscLocation(sensor.location) { context.sensorLocation = location }
        return context
    }

    /// A configured location as Body Sensor Location (chest, wrist, finger, hand, ear lobe, foot, other).
    static func bodyLocation(_ name: String?) -> UInt8? {
        guard let name else { return nil }
        return BodySensorLocation(name: name.replacingOccurrences(of: "-", with: "_"))?.rawValue
    }

    /// A configured location as RSC Sensor Location (in shoe, top of shoe, hip, ...).
    static func rscLocation(_ name: String?) -> UInt8? {
        guard let name else { return nil }
        return SensorLocation(name: name.replacingOccurrences(of: "-", with: "_"))?.rawValue
    }

    static func seed(_ address: String) -> UInt64 {
        address.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}

/// Sees what the service sees, in order (the trace recorder): a sensor's context each time it starts streaming,
/// connection changes, and every notification before it is built into samples. Called on the service's actor:
/// return quickly.
public protocol GatewayObserver: Sendable {
    func sensorReady(address: String, context: SensorContext, characteristics: [BluetoothUUID])
    func connectionChanged(address: String, connected: Bool)
    func notification(_ notification: GATTNotification)
}
