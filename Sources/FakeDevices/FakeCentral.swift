public import GATT
import Synchronization

/// An in-process ``Central`` over simulated peripherals, for fast tests of the layers above the stack.
///
/// It behaves as bluetoothd does where the gateway can tell: connection state is reported by events
/// (`connectionChanged` true, then `servicesResolved` true; on loss `servicesResolved` false, then
/// `connectionChanged` false), notifications arrive only for subscribed characteristics and once per value
/// sent, identical or not, subscriptions survive reconnects, and errors carry BlueZ's names. One connect is in
/// flight per adapter; others wait behind it (their timeout running). Time is a manual clock: ``advance(by:)``
/// runs every peripheral and delivers what it sent in time order. Faults are injected with
/// ``injectConnectFault(_:for:)``, ``removeAdapter(_:)``, ``stopStack()`` and their kin.
///
/// All state sits behind one mutex, and events are yielded with it held, so every stream sees them in the
/// order the state changed.
///
/// Event streams buffer the oldest ``eventBufferCapacity`` events; any event that does not fit is dropped
/// and counted in ``CentralStatistics/droppedEvents``.
public final class FakeCentral: Central {
    /// The adapter a central gets when none is given.
    public static let defaultAdapter = AdapterInfo(
        address: "00:1A:7D:DA:71:13", name: "hci0", powered: true, discovering: false, supportsCentral: true)

    /// How many events each stream holds before it drops.
    public let eventBufferCapacity: Int
    let state: Mutex<FakeCentralState>

    /// A stack with `adapters`, running, at time zero.
    ///
    /// - Parameters:
    ///   - adapters: the adapters the stack has; peripherals are reached through the first unless
    ///     ``add(_:on:)`` says otherwise.
    ///   - peripherals: switched on at time zero, on the first adapter.
    ///   - wallClockStart: microseconds since the epoch at time zero, for ``Timestamp/wallMicroseconds``.
    public init(
        adapters: [AdapterInfo] = [FakeCentral.defaultAdapter], peripherals: [any Peripheral] = [],
        eventBufferCapacity: Int = 4096, wallClockStart: Int64 = 1_780_000_000_000_000
    ) {
        precondition(!adapters.isEmpty, "a fake central needs at least one adapter")
        precondition(eventBufferCapacity > 0, "the event buffer must hold at least one event")
        self.eventBufferCapacity = eventBufferCapacity
        state = Mutex(FakeCentralState(adapters: adapters, wallStart: wallClockStart))
        for peripheral in peripherals { add(peripheral) }
    }

    /// Switches `peripheral` on now, in range of `adapter` (the first adapter by default).
    /// - Returns: its identifier through that adapter.
    @discardableResult
    public func add(_ peripheral: any Peripheral, on adapter: AdapterAddress? = nil) -> PeripheralID {
        state.withLock { state in
            let id = PeripheralID(
                adapter: adapter ?? state.adapters[0].info.address, address: peripheral.identity.address)
            precondition(state.devices[id] == nil, "\(id) is already simulated")
            state.devices[id] = FakeCentralState.Device(peripheral: peripheral, switchedOnAt: state.now)
            return id
        }
    }

    /// Switches on the peripheral `script` describes, now, in range of `adapter` (the first by default).
    /// - Returns: its identifier through that adapter.
    @discardableResult
    public func add(_ script: PeripheralScript, on adapter: AdapterAddress? = nil) -> PeripheralID {
        add(script.makePeripheral(), on: adapter)
    }

    /// The ground truth of a simulated peripheral (what it sent, delivered or not); `nil` for a peripheral
    /// that is not a ``SimulatedPeripheral``. What reached the central is ``deliveredNotifications(of:)``.
    public func groundTruth(of id: PeripheralID) -> GroundTruth? {
        state.withLock { ($0.devices[id]?.peripheral as? any SimulatedPeripheral)?.groundTruth }
    }

    /// The manual clock: time since the central was made.
    public var now: Duration { state.withLock { $0.now } }

    /// Moves the clock forward: every peripheral runs, what they sent is delivered in time order, and
    /// connects without a reply past their timeout fail.
    public func advance(by duration: Duration) {
        state.withLock { $0.advance(by: duration) }
    }

    /// The simulated peripheral as it is now (for its ground truth).
    public func peripheral(_ id: PeripheralID) -> (any Peripheral)? {
        state.withLock { $0.devices[id]?.peripheral }
    }

    /// Every notification this central reported for `id`, oldest first.
    public func deliveredNotifications(of id: PeripheralID) -> [GATTNotification] {
        state.withLock { $0.devices[id]?.delivered ?? [] }
    }

    /// The peripherals whose connect is waiting for a reply.
    public func pendingConnects() -> [PeripheralID] {
        state.withLock { state in state.devices.filter { $0.value.pendingConnect != nil }.keys.sorted() }
    }

    /// The peripherals whose connect waits for another connect on the same adapter, oldest first.
    public func queuedConnects() -> [PeripheralID] {
        state.withLock { $0.queuedConnects.map(\.id) }
    }

    // MARK: Central

    /// A new stream of events from now on, buffering the oldest ``eventBufferCapacity``; the rest are dropped
    /// and counted.
    public func events() -> AsyncStream<CentralEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CentralEvent.self, bufferingPolicy: .bufferingOldest(eventBufferCapacity))
        let key = state.withLock { state in
            state.nextStream += 1
            state.streams[state.nextStream] = continuation
            return state.nextStream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: key) }
        }
        return stream
    }

    /// The adapters present; ``CentralError/Kind/unavailable`` while the stack is stopped.
    public func adapters() async throws(CentralError) -> [AdapterInfo] {
        try state.withLock { (state) throws(CentralError) in
            try state.requireAdapter(nil, "GetManagedObjects").map(\.info)
        }
    }

    /// Peripherals discovered (or paired) on present adapters, in identifier order.
    public func knownPeripherals() async throws(CentralError) -> [PeripheralInfo] {
        try state.withLock { (state) throws(CentralError) in
            try state.requireStack("GetManagedObjects")
            return state.devices.keys.sorted().filter { id in
                state.devices[id]?.known == true && state.adapter(id.adapter) != nil
            }.compactMap { state.info($0) }
        }
    }

    /// Reports every in-range peripheral advertising one of `services` (all when empty) as `discovered`.
    public func startDiscovery(services: [BluetoothUUID], on adapter: AdapterAddress?) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            let adapters = try state.requireAdapter(adapter, "StartDiscovery").map(\.info.address)
            for index in state.adapters.indices where adapters.contains(state.adapters[index].info.address) {
                state.adapters[index].info.discovering = true
            }
            for id in state.devices.keys.sorted() where adapters.contains(id.adapter) {
                guard let identity = state.devices[id]?.peripheral.identity else { continue }
                guard services.isEmpty || identity.advertisedServices.contains(where: services.contains) else {
                    continue
                }
                state.devices[id]?.known = true
                if let info = state.info(id) { state.emit(.discovered(info)) }
            }
        }
    }

    /// Stops discovery on `adapter` (all when `nil`).
    public func stopDiscovery(on adapter: AdapterAddress?) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            let adapters = try state.requireAdapter(adapter, "StopDiscovery").map(\.info.address)
            for index in state.adapters.indices where adapters.contains(state.adapters[index].info.address) {
                state.adapters[index].info.discovering = false
            }
        }
    }

    /// Connects: `connectionChanged` true, then `servicesResolved` true. A queued ``ConnectFault`` answers
    /// instead; ``ConnectFault/noReply`` waits until ``advance(by:)`` passes `timeout`. A connect while another
    /// is pending on the same adapter waits for it.
    public func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError) {
        let result: Result<Void, CentralError> = await withCheckedContinuation { continuation in
            state.withLock { state in
                if let answer = state.beginConnect(peripheral, timeout: timeout, continuation: continuation) {
                    continuation.resume(returning: answer)
                }
            }
        }
        try result.get()
    }

    /// Cancels a pending connect (it fails as aborted) and disconnects: `servicesResolved` false, then
    /// `connectionChanged` false.
    public func disconnect(_ peripheral: PeripheralID) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            _ = try state.requireDevice(peripheral, "Disconnect")
            state.finishPendingConnect(
                peripheral,
                with: .failure(
                    CentralError(
                        .transient, operation: "Connect", detail: "org.bluez.Error.Failed: le-connection-abort-by-local"
                    )))
            state.tearDown(peripheral)
        }
    }

    /// Pairs, connecting first if needed; succeeds at once when already paired. A peripheral that requires
    /// pairing serves reads, writes and subscriptions only after this.
    public func pair(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            let device = try state.requireDevice(peripheral, "Pair")
            if device.paired { return }
            if state.pairFaults.remove(peripheral) != nil {
                throw CentralError(
                    .authentication, operation: "Pair",
                    detail: "org.bluez.Error.AuthenticationFailed: Authentication Failed")
            }
            if !device.connected {
                state.devices[peripheral]?.connected = true
                state.emit(.connectionChanged(peripheral, connected: true))
            }
            state.devices[peripheral]?.paired = true
            if var simulated = state.devices[peripheral]?.peripheral as? any SimulatedPeripheral {
                simulated.setPaired(true)
                state.devices[peripheral]?.peripheral = simulated
            }
            state.establish(peripheral)
        }
    }

    /// Records the trust flag, reported in ``PeripheralInfo/trusted``.
    public func setTrusted(_ peripheral: PeripheralID, _ trusted: Bool) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            _ = try state.requireDevice(peripheral, "Set(Trusted)")
            state.devices[peripheral]?.trusted = trusted
        }
    }

    /// Forgets the peripheral: disconnects, drops bond, trust and subscriptions, reports `peripheralRemoved`.
    /// It must be discovered again.
    public func remove(_ peripheral: PeripheralID) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            _ = try state.requireDevice(peripheral, "RemoveDevice")
            state.forget(peripheral)
        }
    }

    /// The characteristics of the last resolution (empty while unresolved), with BlueZ-shaped paths as handles.
    public func characteristics(of peripheral: PeripheralID) async throws(CentralError) -> [CharacteristicInfo] {
        try state.withLock { (state) throws(CentralError) in
            let device = try state.requireDevice(peripheral, "GetManagedObjects")
            return device.resolved ? device.table : []
        }
    }

    /// Notifications delivered and events dropped.
    public func statistics() async -> CentralStatistics {
        state.withLock { $0.statistics }
    }

    /// Events are yielded as the simulation makes them: nothing is on its way.
    public func flushEvents() async {}
}
