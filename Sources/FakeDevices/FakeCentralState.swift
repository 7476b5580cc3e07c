import GATT

/// Everything ``FakeCentral`` knows, guarded by its mutex. Every method runs with the lock held, so events
/// are yielded in the order the state changed.
struct FakeCentralState {
    struct Device {
        var peripheral: any Peripheral
        /// Central time at which the peripheral was switched on (its clock's zero).
        var switchedOnAt: Duration
        var known = false
        var paired = false
        var trusted = false
        var connected = false
        var resolved = false
        var resolvedServices: [ServiceDefinition] = []
        var table: [CharacteristicInfo] = []
        var subscriptions: Set<BluetoothUUID> = []
        var connectFaults: [ConnectFault] = []
        var pendingConnect: PendingConnect?
        var delivered: [GATTNotification] = []
    }

    struct PendingConnect {
        var deadline: Duration
        var continuation: CheckedContinuation<Result<Void, CentralError>, Never>
    }

    /// A connect waiting for another one on the same adapter to finish.
    struct QueuedConnect {
        var id: PeripheralID
        var deadline: Duration
        var continuation: CheckedContinuation<Result<Void, CentralError>, Never>
    }

    struct Adapter {
        var info: AdapterInfo
        var present: Bool
    }

    var now: Duration = .zero
    let wallStart: Int64
    var stackUp = true
    var adapters: [Adapter]
    var devices: [PeripheralID: Device] = [:]
    var streams: [UInt64: AsyncStream<CentralEvent>.Continuation] = [:]
    var nextStream: UInt64 = 0
    var statistics = CentralStatistics()
    var pairFaults: Set<PeripheralID> = []
    var queuedConnects: [QueuedConnect] = []

    init(adapters: [AdapterInfo], wallStart: Int64) {
        self.adapters = adapters.map { Adapter(info: $0, present: true) }
        self.wallStart = wallStart
    }

    // MARK: Events

    mutating func emit(_ event: CentralEvent) {
        statistics.events += 1
        for continuation in streams.values {
            if case .dropped = continuation.yield(event) { statistics.droppedEvents += 1 }
        }
    }

    // MARK: Lookups that throw the way BlueZ answers

    /// What D-Bus answers when nobody owns `org.bluez`.
    static let serviceUnknown =
        "org.freedesktop.DBus.Error.ServiceUnknown: The name org.bluez was not provided by any .service files"

    func requireStack(_ operation: String) throws(CentralError) {
        guard stackUp else { throw CentralError(.unavailable, operation: operation, detail: Self.serviceUnknown) }
    }

    func adapter(_ address: AdapterAddress) -> Adapter? {
        adapters.first { $0.present && $0.info.address == address.uppercased() }
    }

    func requireAdapter(_ address: AdapterAddress?, _ operation: String) throws(CentralError) -> [Adapter] {
        try requireStack(operation)
        guard let address else { return adapters.filter(\.present) }
        guard let adapter = adapter(address) else {
            throw CentralError(
                .unavailable, operation: operation,
                detail: "org.freedesktop.DBus.Error.UnknownObject: no adapter \(address)")
        }
        return [adapter]
    }

    /// The device, which must be known to a present adapter of a running stack.
    func requireDevice(_ id: PeripheralID, _ operation: String) throws(CentralError) -> Device {
        try requireStack(operation)
        guard adapter(id.adapter) != nil, let device = devices[id], device.known else {
            throw CentralError(
                .deviceMissing, operation: operation,
                detail: "org.freedesktop.DBus.Error.UnknownObject: no device \(id)")
        }
        return device
    }

    /// The device, connected, with `characteristic` from its current resolution.
    func requireCharacteristic(
        _ characteristic: CharacteristicInfo, of id: PeripheralID, _ operation: String, connected: Bool = true
    ) throws(CentralError) -> Device {
        let device = try requireDevice(id, operation)
        guard device.table.contains(characteristic) else {
            throw CentralError(
                .deviceMissing, operation: operation,
                detail: "org.freedesktop.DBus.Error.UnknownObject: no characteristic \(characteristic.handle)")
        }
        if connected && !device.connected {
            throw CentralError(.transient, operation: operation, detail: "org.bluez.Error.Failed: Not connected")
        }
        return device
    }

    static func error(_ error: ATTError, _ operation: String) -> CentralError {
        switch error {
        // The names and messages FakeBlueZ answers, after BlueZ 5.66 (docs/bluez.md, F10; kinds as R8 sorts them).
        case .insufficientAuthentication, .insufficientEncryption, ATTError(code: 0x0C):
            CentralError(.authentication, operation: operation, detail: "org.bluez.Error.NotPermitted: Not paired")
        case ATTError(code: 0x08):
            CentralError(
                .notPermitted, operation: operation, detail: "org.bluez.Error.NotAuthorized: Operation Not Authorized")
        case .readNotPermitted, .writeNotPermitted:
            CentralError(.notPermitted, operation: operation, detail: "org.bluez.Error.NotPermitted: Not permitted")
        case .requestNotSupported:
            CentralError(.notPermitted, operation: operation, detail: "org.bluez.Error.NotSupported: Not supported")
        default:
            CentralError(
                .other, operation: operation,
                detail: "org.bluez.Error.Failed: Operation failed with ATT error: \(error)")
        }
    }

    func info(_ id: PeripheralID) -> PeripheralInfo? {
        guard let device = devices[id] else { return nil }
        let identity = device.peripheral.identity
        return PeripheralInfo(
            id: id, name: identity.name,
            services: device.resolved ? device.resolvedServices.map(\.uuid) : identity.advertisedServices,
            rssi: identity.rssi, paired: device.paired, trusted: device.trusted, connected: device.connected,
            servicesResolved: device.resolved)
    }

    // MARK: Connection state, in BlueZ's order

    /// Connected=true, then the service resolution and ServicesResolved=true.
    mutating func establish(_ id: PeripheralID) {
        if devices[id]?.connected == false {
            devices[id]?.connected = true
            emit(.connectionChanged(id, connected: true))
        }
        if devices[id]?.resolved == false { resolve(id) }
    }

    mutating func resolve(_ id: PeripheralID) {
        guard let device = devices[id], let adapter = adapter(id.adapter) else { return }
        let services = device.peripheral.services
        devices[id]?.resolvedServices = services
        devices[id]?.table = CharacteristicTable.build(
            services: services, adapterName: adapter.info.name, address: id.address)
        devices[id]?.resolved = true
        emit(.servicesResolved(id, resolved: true))
    }

    /// ServicesResolved=false, then Connected=false.
    mutating func tearDown(_ id: PeripheralID) {
        if devices[id]?.resolved == true {
            devices[id]?.resolved = false
            emit(.servicesResolved(id, resolved: false))
        }
        if devices[id]?.connected == true {
            devices[id]?.connected = false
            emit(.connectionChanged(id, connected: false))
        }
    }

    /// Answers a pending connect, if there is one, then starts the connects queued behind it.
    mutating func finishPendingConnect(_ id: PeripheralID, with result: Result<Void, CentralError>) {
        guard let pending = devices[id]?.pendingConnect else { return }
        devices[id]?.pendingConnect = nil
        pending.continuation.resume(returning: result)
        startQueuedConnects(on: id.adapter)
    }

    /// Starts queued connects on `adapter`, oldest first, until one has to wait for its reply.
    mutating func startQueuedConnects(on adapter: AdapterAddress) {
        while !devices.contains(where: { $0.key.adapter == adapter && $0.value.pendingConnect != nil }),
            let index = queuedConnects.firstIndex(where: { $0.id.adapter == adapter })
        {
            let queued = queuedConnects.remove(at: index)
            if let answer = beginConnect(queued.id, timeout: queued.deadline - now, continuation: queued.continuation) {
                queued.continuation.resume(returning: answer)
            }
        }
    }

    /// Fails the queued connects `matching` with `error`.
    mutating func failQueuedConnects(with error: CentralError, matching: (PeripheralID) -> Bool) {
        let failed = queuedConnects.filter { matching($0.id) }
        queuedConnects.removeAll { matching($0.id) }
        for queued in failed { queued.continuation.resume(returning: .failure(error)) }
    }

    /// Starts a connect: the immediate answer, or `nil` when it waits (a ``ConnectFault/noReply``).
    mutating func beginConnect(
        _ id: PeripheralID, timeout: Duration, continuation: CheckedContinuation<Result<Void, CentralError>, Never>
    ) -> Result<Void, CentralError>? {
        let operation = "Connect"
        let device: Device
        do throws(CentralError) {
            device = try requireDevice(id, operation)
        } catch {
            return .failure(error)
        }
        let inProgress = CentralError(
            .inProgress, operation: operation, detail: "org.bluez.Error.InProgress: In Progress")
        if device.pendingConnect != nil || queuedConnects.contains(where: { $0.id == id }) {
            return .failure(inProgress)
        }
        if device.connected {
            establish(id)
            return .success(())
        }
        if devices.contains(where: { $0.key.adapter == id.adapter && $0.value.pendingConnect != nil }) {
            // One connect at a time per adapter: this one waits for the pending one.
            queuedConnects.append(QueuedConnect(id: id, deadline: now + timeout, continuation: continuation))
            return nil
        }
        if let fault = device.connectFaults.first {
            devices[id]?.connectFaults.removeFirst()
            switch fault {
            case .abortByLocal:
                return .failure(
                    CentralError(
                        .transient, operation: operation, detail: "org.bluez.Error.Failed: le-connection-abort-by-local"
                    ))
            case .failed(let message):
                return .failure(
                    CentralError(.transient, operation: operation, detail: "org.bluez.Error.Failed: \(message)"))
            case .inProgress:
                return .failure(inProgress)
            case .noReply:
                devices[id]?.pendingConnect = PendingConnect(deadline: now + timeout, continuation: continuation)
                return nil
            case .removed:
                forget(id)
                return .failure(
                    CentralError(
                        .deviceMissing, operation: operation,
                        detail: "org.freedesktop.DBus.Error.UnknownObject: Method \"Connect\" with signature \"\" on "
                            + "interface \"org.bluez.Device1\" doesn't exist"))
            }
        }
        establish(id)
        return .success(())
    }

    // MARK: Time

    mutating func advance(by duration: Duration) {
        precondition(duration >= .zero, "the fake clock only moves forward")
        now += duration
        var batch: [(at: Duration, order: Int, id: PeripheralID, emission: PeripheralEmission)] = []
        for id in devices.keys.sorted() {
            guard let switchedOnAt = devices[id]?.switchedOnAt, switchedOnAt <= now else { continue }
            let emissions = devices[id]?.peripheral.advance(to: now - switchedOnAt) ?? []
            for emission in emissions {
                batch.append((emission.at + switchedOnAt, batch.count, id, emission))
            }
        }
        batch.sort { ($0.at, $0.order) < ($1.at, $1.order) }
        for item in batch { deliver(item.emission, at: item.at, from: item.id) }
        for id in devices.keys.sorted() { checkServicesChanged(id) }
        let noReply = CentralError(
            .timeout, operation: "Connect", detail: "org.freedesktop.DBus.Error.NoReply: Did not receive a reply")
        let expired = queuedConnects.filter { $0.deadline <= now }.map(\.id)
        failQueuedConnects(with: noReply) { expired.contains($0) }
        for id in devices.keys.sorted() {
            if let pending = devices[id]?.pendingConnect, pending.deadline <= now {
                finishPendingConnect(id, with: .failure(noReply))
            }
        }
    }

    /// Runs one peripheral up to now (after a write that may have queued an indication) and delivers.
    mutating func flush(_ id: PeripheralID) {
        guard let switchedOnAt = devices[id]?.switchedOnAt, switchedOnAt <= now else { return }
        for emission in devices[id]?.peripheral.advance(to: now - switchedOnAt) ?? [] {
            deliver(emission, at: emission.at + switchedOnAt, from: id)
        }
    }

    /// Reports a value when the stack is up, the device connected and resolved, and the characteristic
    /// subscribed; anything else goes nowhere, as over the air.
    mutating func deliver(_ emission: PeripheralEmission, at time: Duration, from id: PeripheralID) {
        guard stackUp, adapter(id.adapter) != nil, let device = devices[id], device.connected, device.resolved,
            device.subscriptions.contains(emission.characteristic),
            // An unpaired link to a peripheral that needs pairing has its CCCD refused, as FakeBlueZ has.
            !device.peripheral.requiresPairing || device.paired
        else { return }
        let (seconds, attoseconds) = time.components
        let notification = GATTNotification(
            peripheral: id, characteristic: emission.characteristic, value: emission.value,
            receivedAt: Timestamp(
                monotonic: time, wallMicroseconds: wallStart + seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        devices[id]?.delivered.append(notification)
        statistics.notifications += 1
        emit(.notification(notification))
    }

    /// A connected peripheral whose services changed (a firmware update) is resolved again.
    mutating func checkServicesChanged(_ id: PeripheralID) {
        guard let device = devices[id], device.resolved, device.peripheral.services != device.resolvedServices
        else { return }
        devices[id]?.resolved = false
        emit(.servicesResolved(id, resolved: false))
        resolve(id)
    }
}
