public import DBus
public import GATT
internal import Synchronization

/// The production ``Central``: bluetoothd over D-Bus (`org.bluez`), on top of a ``BlueZObjectCache``.
///
/// ```swift
/// let bus = try await DBusConnection.connect()              // the system bus, or DBUS_SYSTEM_BUS_ADDRESS
/// let central = try await BlueZCentral.start(on: bus)
/// for await event in central.events() { ... }
/// ```
///
/// What it does for the requirements of `docs/bluez.md`:
/// - R1-R3 through the cache; on a new bluetoothd (R2) it registers the pairing agent again, restarts the
///   discovery it had running and reports ``CentralEvent/stackAvailable`` so that sessions reconnect.
/// - R4: ``chooseAdapter(_:)``: the configured address, else the first powered adapter with the central role.
/// - R7: one Connect in flight per adapter (others wait their turn), our discovery paused meanwhile, an explicit
///   timeout after which the pending Connect is cancelled with Disconnect.
/// - R8: every failure is a ``CentralError`` classified by ``CentralError/init(_:operation:)``.
/// - R11: notifications are the `PropertiesChanged(Value)` of characteristics this central subscribed to
///   (values of other characteristics, such as a read's echo, F5, are not reported as notifications), or the
///   datagrams of an `AcquireNotify` socket when a sensor asks for it.
/// - R13: ``shutdown(disconnecting:)`` releases notify sessions, disconnects the managed sensors, stops discovery
///   and unregisters the agent.
/// - R14: discovery with `SetDiscoveryFilter{UUIDs, Transport=le, DuplicateData=false}`; `InProgress` counts as
///   running; results are re-checked against our own filter (bluetoothd merges the filters of all clients).
///
/// The actor runs on the bus thread, like the cache and the connection.
public actor BlueZCentral: Central {
    let bus: DBusConnection
    /// The mirror of bluetoothd's objects.
    public let cache: BlueZObjectCache
    let listeners = Listeners()
    /// Characteristics with a notify session of ours: (peripheral, characteristic UUID).
    var subscriptions: Set<Subscription> = []
    /// Characteristics whose notifications come through an AcquireNotify socket.
    var acquired: [Subscription: AcquiredNotify] = [:]
    /// Our discovery sessions: adapter address → service filter.
    var discovery: [AdapterAddress: [BluetoothUUID]] = [:]
    /// Adapters with a Connect in flight, and the calls waiting for their turn.
    var connecting: Set<AdapterAddress> = []
    var connectQueue: [AdapterAddress: [CheckedContinuation<Void, Never>]] = [:]
    /// The agent served for pairing, if any.
    public private(set) var agent: PairingAgent?
    var forwarding: Task<Void, Never>?
    var notificationCount = 0
    /// The cache's events taken so far, and the ``drainEvents()`` calls waiting for a count.
    var forwardedEvents = 0
    /// Events passed on to the listeners (``CentralStatistics/events``).
    var passedOnEvents = 0
    /// The cache's stream has ended: nothing more will be forwarded, so a drain has nothing to wait for.
    var forwardingEnded = false
    var drainWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []

    struct Subscription: Hashable {
        var peripheral: PeripheralID
        var characteristic: BluetoothUUID
    }

    /// Runs on the bus thread, like the connection.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { bus.unownedExecutor }

    init(bus: DBusConnection, cache: BlueZObjectCache) {
        self.bus = bus
        self.cache = cache
    }

    /// Starts the object cache on `bus` and, unless `agentCapability` is `nil`, serves a ``PairingAgent`` that
    /// accepts only the devices ``pair(_:timeout:)`` is pairing (and shows their passkeys to `onPasskey`). Works
    /// without bluetoothd: the cache fills when it appears.
    ///
    /// - Throws: ``CentralError`` (`unavailable`) when the bus refuses the matches.
    public static func start(
        on bus: DBusConnection, agentCapability: String? = "NoInputNoOutput", agentIsDefault: Bool = true,
        onPasskey: (@Sendable (_ device: String, _ passkey: UInt32, _ kind: PairingAgent.PasskeyKind) -> Void)? = nil,
        clock: @escaping @Sendable () -> Timestamp = BlueZObjectCache.systemTimestamp
    ) async throws(CentralError) -> BlueZCentral {
        let cache = BlueZObjectCache(bus: bus, clock: clock)
        let central = BlueZCentral(bus: bus, cache: cache)
        let stream = await cache.events()
        await central.beginForwarding(stream)
        do {
            try await cache.start()
        } catch {
            await central.cancelForwarding()
            throw CentralError(error, operation: "GetManagedObjects")
        }
        if let agentCapability {
            await central.serveAgent(
                PairingAgent(
                    bus: bus, capability: agentCapability, isDefault: agentIsDefault, onPasskey: onPasskey))
        }
        return central
    }

    private func beginForwarding(_ stream: AsyncStream<CentralEvent>) {
        // allowed: kept in `forwarding`, cancelled by shutdown(); forwards the cache's events as long as the central lives
        forwarding = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.forward(event)
                await self.forwarded(ended: false)
            }
            await self?.forwarded(ended: true)
        }
    }

    /// Counts one forwarded event (or the end of the cache's stream) and resumes the drains it satisfies.
    private func forwarded(ended: Bool) {
        if ended { forwardingEnded = true } else { forwardedEvents += 1 }
        guard !drainWaiters.isEmpty else { return }
        let ready = drainWaiters.filter { ended || $0.target <= forwardedEvents }
        drainWaiters.removeAll { ended || $0.target <= forwardedEvents }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once every signal received before this call has been applied by the cache and its events passed
    /// on to our listeners. Called after a method call to bluetoothd returns, it passes on everything bluetoothd
    /// signalled before it answered (the bus keeps one sender's messages in order).
    func drainEvents() async {
        let target = await cache.drain()
        guard forwardedEvents < target, forwarding != nil, !forwardingEnded else { return }
        await withCheckedContinuation { drainWaiters.append((target, $0)) }
    }

    private func cancelForwarding() {
        forwarding?.cancel()
        forwarding = nil
        listeners.finishAll()
    }

    private func serveAgent(_ agent: PairingAgent) async {
        self.agent = agent
        await agent.register()
    }

    /// Applies one cache event and passes it on (notifications only for our subscriptions, discoveries only
    /// when they match our filter).
    private func forward(_ event: CentralEvent) async {
        switch event {
        case .notification(let notification):
            guard
                subscriptions.contains(
                    Subscription(peripheral: notification.peripheral, characteristic: notification.characteristic))
            else { return }
            notificationCount += 1
        case .discovered(let info):
            if let filter = discovery[info.id.adapter], !filter.isEmpty,
                !info.services.contains(where: filter.contains), !info.paired, !info.connected
            {
                return
            }
        case .stackUnavailable:
            // Notify and discovery sessions die with bluetoothd; sessions subscribe again after reconnecting.
            subscriptions = []
            for notify in acquired.values { notify.reader.close() }
            acquired = [:]
        case .stackAvailable:
            await agent?.register()
            for (adapter, services) in discovery {
                try? await beginDiscovery(services: services, on: adapter)
            }
        case .adapterRemoved(let address):
            subscriptions = subscriptions.filter { $0.peripheral.adapter != address }
            for (subscription, notify) in acquired where subscription.peripheral.adapter == address {
                notify.reader.close()
                acquired[subscription] = nil
            }
        default:
            break
        }
        passedOnEvents += 1
        listeners.yield(event)
    }

    // MARK: Central

    public nonisolated func events() -> AsyncStream<CentralEvent> {
        listeners.makeStream()
    }

    public func adapters() async throws(CentralError) -> [AdapterInfo] {
        try await requireStack("Adapters")
        return await cache.adapters
    }

    public func knownPeripherals() async throws(CentralError) -> [PeripheralInfo] {
        try await requireStack("Devices")
        return await cache.peripherals
    }

    /// R4: the adapter with `address`, else the first powered adapter that can be a central.
    ///
    /// - Throws: ``CentralError`` `unavailable` naming what is missing.
    public func chooseAdapter(_ address: AdapterAddress?) async throws(CentralError) -> AdapterInfo {
        let adapters = try await adapters()
        if let address {
            guard let adapter = adapters.first(where: { $0.address == address.uppercased() }) else {
                throw CentralError(.unavailable, operation: "Adapter", detail: "no adapter with address \(address)")
            }
            return adapter
        }
        guard let adapter = adapters.first(where: { $0.powered && $0.supportsCentral }) ?? adapters.first else {
            throw CentralError(.unavailable, operation: "Adapter", detail: "bluetoothd has no adapter")
        }
        return adapter
    }

    public func startDiscovery(services: [BluetoothUUID], on adapter: AdapterAddress?) async throws(CentralError) {
        let address = try await chooseAdapter(adapter).address
        discovery[address] = services
        do throws(CentralError) {
            try await beginDiscovery(services: services, on: address)
        } catch {
            discovery[address] = nil
            throw error
        }
    }

    func beginDiscovery(services: [BluetoothUUID], on address: AdapterAddress) async throws(CentralError) {
        let path = try await adapterPath(address, "StartDiscovery")
        var filter: [(String, DBusValue)] = [("Transport", .string("le")), ("DuplicateData", .boolean(false))]
        if !services.isEmpty { filter.insert(("UUIDs", .strings(services.map(\.description))), at: 0) }
        try await call(path, Self.adapter1, "SetDiscoveryFilter", [.vardict(ordered: filter)])
        do throws(CentralError) {
            try await call(path, Self.adapter1, "StartDiscovery")
        } catch  where error.kind == .inProgress {
            // R14: our session is already running.
        }
    }

    public func stopDiscovery(on adapter: AdapterAddress?) async throws(CentralError) {
        let address = try await chooseAdapter(adapter).address
        guard discovery.removeValue(forKey: address) != nil else { return }
        try await endDiscovery(on: address)
    }

    func endDiscovery(on address: AdapterAddress) async throws(CentralError) {
        let path = try await adapterPath(address, "StopDiscovery")
        do throws(CentralError) {
            try await call(path, Self.adapter1, "StopDiscovery")
        } catch  where error.detail.hasSuffix("No discovery started") {
            // Ours had already ended (bluetoothd restarted, adapter reset).
        }
    }

    public func statistics() async -> CentralStatistics {
        CentralStatistics(
            notifications: notificationCount, droppedEvents: listeners.dropped + (await cache.droppedEvents),
            events: passedOnEvents)
    }

    /// A round trip to bluetoothd (`Peer.Ping`, answered by its bus library), then ``drainEvents()``: every
    /// signal it sent before the answer is passed on. Without bluetoothd, what was received is passed on.
    public func flushEvents() async {
        _ = try? await call("/", "org.freedesktop.DBus.Peer", "Ping", timeout: .seconds(2))
        await drainEvents()
    }

    /// R13 at stop: releases our notify sessions, disconnects `managed` peripherals, stops our discovery and
    /// unregisters the agent; then finishes every event stream. Failures are ignored (the stack may be gone).
    public func shutdown(disconnecting managed: [PeripheralID]) async {
        for subscription in subscriptions {
            let characteristic = await cache.characteristics(of: subscription.peripheral).first {
                $0.uuid == subscription.characteristic
            }
            if let characteristic {
                _ = try? await call(characteristic.handle, Self.characteristic1, "StopNotify", timeout: .seconds(2))
            }
        }
        await drainEvents()  // notifications sent before the StopNotify answers are still ours
        subscriptions = []
        for notify in acquired.values { notify.reader.close() }
        acquired = [:]
        for peripheral in managed {
            try? await disconnect(peripheral)
        }
        for address in discovery.keys {
            try? await endDiscovery(on: address)
        }
        discovery = [:]
        await agent?.unregister()
        await cache.stop()
        cancelForwarding()
    }

    // MARK: Helpers

    static let adapter1 = "org.bluez.Adapter1"
    static let device1 = "org.bluez.Device1"
    static let characteristic1 = "org.bluez.GattCharacteristic1"

    /// Calls an org.bluez method, turning failures into classified ``CentralError``s named after `member`.
    @discardableResult
    func call(
        _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(CentralError) -> [DBusValue] {
        do {
            return try await bus.call(
                BlueZObjectCache.serviceName, path: path, interface: interface, member: member, arguments: arguments,
                timeout: timeout)
        } catch {
            throw CentralError(error, operation: member)
        }
    }

    func requireStack(_ operation: String) async throws(CentralError) {
        guard await cache.isAvailable else {
            throw CentralError(
                .unavailable, operation: operation, detail: "org.bluez has no owner (is bluetoothd running?)")
        }
    }

    func adapterPath(_ address: AdapterAddress, _ operation: String) async throws(CentralError) -> String {
        guard let path = await cache.adapterPath(of: address) else {
            throw CentralError(.unavailable, operation: operation, detail: "adapter \(address) is gone")
        }
        return path
    }

    func devicePath(_ peripheral: PeripheralID, _ operation: String) async throws(CentralError) -> String {
        guard let path = await cache.devicePath(of: peripheral) else {
            try await requireStack(operation)
            throw CentralError(.deviceMissing, operation: operation, detail: "bluetoothd has no device \(peripheral)")
        }
        return path
    }
}

/// The event streams handed out by ``BlueZCentral/events()``: unbounded, so nothing is dropped while a consumer
/// is busy; anything a finished stream refuses is counted.
final class Listeners: Sendable {
    private struct State {
        var continuations: [Int: AsyncStream<CentralEvent>.Continuation] = [:]
        var next = 0
        var dropped = 0
        var finished = false
    }
    private let state = Mutex(State())

    func makeStream() -> AsyncStream<CentralEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CentralEvent.self)
        let finished = state.withLock { state -> Bool in
            guard !state.finished else { return true }
            let id = state.next
            state.next += 1
            state.continuations[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
            }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    func yield(_ event: CentralEvent) {
        let continuations = state.withLock { Array($0.continuations.values) }
        var dropped = 0
        for continuation in continuations {
            if case .dropped = continuation.yield(event) { dropped += 1 }
        }
        if dropped > 0 { state.withLock { $0.dropped += dropped } }
    }

    var dropped: Int { state.withLock { $0.dropped } }

    func finishAll() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.continuations = [:] }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
