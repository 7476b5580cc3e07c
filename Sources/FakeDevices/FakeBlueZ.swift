public import DBus
public import GATT
internal import Glibc

/// A fake bluetoothd: serves `org.bluez` on a bus (a private dbus-daemon in tests) with BlueZ 5.66's object
/// paths, property types and signal order, backed by simulated peripherals.
///
/// ```swift
/// let fake = try await FakeBlueZ.start(on: .address(bus.address), scenario: scenario)
/// try await fake.advance(by: .seconds(5))   // peripherals run; subscribed values become PropertiesChanged
/// await fake.stop()
/// ```
///
/// Objects: `/` (ObjectManager), `/org/bluez` (AgentManager1), `/org/bluez/hci0` (Adapter1),
/// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` (Device1, for known peripherals at start and nearby ones once
/// discovered), and on first connect `…/serviceXXXX` (GattService1) and `…/serviceXXXX/charYYYY`
/// (GattCharacteristic1), cached across reconnects. The actor runs on the bus connection's thread, so D-Bus
/// handlers and the clock share one serial executor.
///
/// Behaviour follows BlueZ 5.66 (`docs/bluez.md`, F1-F18): Connect answers, then `ServicesResolved=true`, then
/// the GATT objects are added (first connection, or after the services changed; 5.66 sends them in this order
/// too, seen in the BlueZ VM, docs/bluez-vm.md); disconnection is
/// `ServicesResolved=false` then `Connected=false`; StartNotify sessions are per sender, survive reconnects and
/// end when the sender leaves the bus; discovery sessions are per sender. Pair calls the caller's (or the
/// default) agent back unless it is `NoInputNoOutput`. The fault API (``setConnectFault(_:for:)``,
/// ``dropConnection(of:)``, ``setNearby(_:for:)``, ``removeAdapter()``) injects what goes wrong.
public actor FakeBlueZ {
    /// The well-known name served.
    public static let busName = "org.bluez"
    /// The adapter's object path.
    public static let adapterPath = "/org/bluez/hci0"

    let bus: DBusConnection
    let scenario: FakeBlueZScenario
    /// Simulated devices by path.
    var devices: [String: FakeBlueZDevice] = [:]
    /// Device paths in scenario order.
    var devicePaths: [String] = []
    /// Senders with a discovery session, and their filters' UUIDs (empty: no UUID filter).
    var discoverySessions: [String: [BluetoothUUID]] = [:]
    var discoveryFilters: [String: [BluetoothUUID]] = [:]
    /// Registered agents: sender → (path, capability); and the default agent's sender.
    var agents: [String: (path: String, capability: String)] = [:]
    var defaultAgent: String?
    /// Whether `/org/bluez/hci0` is served (``removeAdapter()``).
    var adapterPresent = true
    /// Senders whose discovery filter is set (bluetoothd then reports every advertisement, not only RSSI moves
    /// of 8 dBm or more).
    var filteredSenders: Set<String> = []
    /// When discovery last reported the nearby devices (`nil`: not discovering).
    var lastAdvertisement: Duration?
    /// How often a nearby, unconnected peripheral advertises.
    public static let advertisingInterval: Duration = .milliseconds(500)
    /// bluetoothd's `TemporaryTimeout` (main.conf, 30 s by default): how long a device only found by discovery
    /// stays after its last advertisement.
    public static let temporaryTimeout: Duration = .seconds(30)
    /// The simulation clock: time since switch-on of every peripheral.
    public private(set) var now: Duration = .zero
    /// Work deferred past a reply and not yet run, and who waits until there is none (``idle()``).
    var deferredWork = 0
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Errors met while emitting signals from scheduled work (nobody to throw them to), for tests.
    public internal(set) var emissionErrors: [String] = []

    /// Runs on the bus thread, like the connection.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { bus.unownedExecutor }

    /// Peripherals given besides the scenario.
    let extra: [any SimulatedPeripheral]

    init(bus: DBusConnection, scenario: FakeBlueZScenario, extra: [any SimulatedPeripheral] = []) {
        self.bus = bus
        self.scenario = scenario
        self.extra = extra
    }

    /// Connects to `address`, exports the adapter and the known devices, and takes the name `org.bluez`.
    ///
    /// - Throws: ``DBusError`` when the bus cannot be reached, or ``FakeBlueZError`` when the name is taken.
    /// `peripherals` are served beside the scenario's, known to bluetoothd from the start (a recorded trace's
    /// sensors, for example).
    public static func start(
        on address: DBusAddress, scenario: FakeBlueZScenario, peripherals: [any SimulatedPeripheral] = []
    ) async throws -> FakeBlueZ {
        let bus = try await DBusConnection.connect(to: address)
        let fake = FakeBlueZ(bus: bus, scenario: scenario, extra: peripherals)
        do {
            try await fake.exportInitialObjects()
            try await fake.watchClients()
            let result = try await bus.requestName(busName, flags: [.doNotQueue])
            guard result == .primaryOwner || result == .alreadyOwner else {
                throw FakeBlueZError(message: "org.bluez is already owned (\(result))")
            }
        } catch {
            await bus.close()
            throw error
        }
        return fake
    }

    /// Closes the connection: the name goes away with it (as when bluetoothd exits). Idempotent.
    public func stop() async {
        await bus.close()
        for (path, device) in devices {
            for (_, info) in device.characteristics { if let socket = info.acquiredSocket { close(socket) } }
            for key in device.characteristics.keys { devices[path]?.characteristics[key]?.acquiredSocket = nil }
        }
    }

    /// Our unique name on the bus.
    public var uniqueName: String {
        get async { await bus.uniqueName }
    }

    // MARK: Clock

    /// Runs every peripheral up to `time` (since switch-on). Each value a peripheral sends on a characteristic
    /// with a notify session, while connected, becomes one `PropertiesChanged(Value)`, repeated values included.
    /// Going backwards does nothing.
    public func tick(to time: Duration) {
        guard time > now else { return }
        now = time
        for path in devicePaths {
            // Commands written to acquired sockets reach the peripheral first.
            for (charPath, info) in devices[path]?.characteristics ?? [:] where info.writeSocket != nil {
                drainAcquiredWrites(charPath, of: path)
            }
            guard var device = devices[path] else { continue }
            let emissions = device.peripheral.advance(to: time)
            devices[path] = device
            guard device.connected else { continue }
            for emission in emissions { deliver(emission, from: path) }
            if device.peripheral.wantsToDisconnect { disconnect(path) }
        }
        advertise()
        removeDisappearedDevices()
    }

    /// Advances the clock by `duration` (see ``tick(to:)``).
    public func advance(by duration: Duration) {
        tick(to: now + duration)
    }

    /// Advances the clock with the wall clock, every `interval`, until the calling task is cancelled
    /// (standalone use). The simulation time goes on from ``now``.
    public func runInRealTime(interval: Duration = .milliseconds(100)) async {
        let clock = ContinuousClock()
        let start = clock.now
        let origin = now
        while !Task.isCancelled {
            do {
                try await clock.sleep(for: interval)
            } catch {
                return
            }
            tick(to: origin + (clock.now - start))
        }
    }

    /// Runs `body` while the simulation follows the wall clock: ``runInRealTime(interval:)`` as a child task,
    /// cancelled when `body` returns.
    public func inRealTime<T, Failure: Error>(
        interval: Duration = .milliseconds(100), isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result = await withDiscardingTaskGroup(returning: Result<T, Failure>.self) { group in
            group.addTask { await self.runInRealTime(interval: interval) }
            defer { group.cancelAll() }
            do throws(Failure) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The ground truth of the peripheral at `address` (what it really sent), or `nil`.
    public func groundTruth(of address: String) -> GroundTruth? {
        devices[Self.devicePath(address)]?.peripheral.groundTruth
    }

    /// The simulated peripheral at `address` as it is now (a copy), or `nil`: for a test to read what a
    /// peripheral keeps beyond its ground truth (a glucose meter's control point requests).
    public func peripheral(at address: String) -> (any SimulatedPeripheral)? {
        devices[Self.devicePath(address)]?.peripheral
    }

    /// The values the peripheral at `address` notified to subscribed clients, oldest first.
    public func deliveredNotifications(of address: String) -> [PeripheralEmission] {
        devices[Self.devicePath(address)]?.delivered ?? []
    }

    /// The object path BlueZ gives a device: `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public nonisolated static func devicePath(_ address: String) -> String {
        adapterPath + "/dev_" + String(address.uppercased().map { $0 == ":" ? "_" : $0 })
    }

    // MARK: Helpers

    /// Runs `work` on this actor once the handler now running has returned, so that its reply goes out first (a
    /// disconnection after `Disconnect`'s reply, the services resolved after `Connect`'s), counted for ``idle()``.
    func afterReply(_ work: @escaping @Sendable (isolated FakeBlueZ) -> Void) {
        deferredWork += 1
        // allowed: deferred past the reply on the fake's executor; counted until done, awaited by idle()
        Task {
            work(self)
            self.deferredWork -= 1
            guard self.deferredWork == 0 else { return }
            let waiters = self.idleWaiters
            self.idleWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once the work deferred past a reply (``afterReply(_:)``) has run: the signals it sent are on the
    /// bus, ahead of anything sent after this returns. A test on a manual clock waits for it before it moves on.
    public func idle() async {
        if deferredWork == 0 { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Runs `body` with the connection, isolated (we share its executor).
    func withBus<T: Sendable>(_ body: (isolated DBusConnection) throws -> T) rethrows -> T {
        try bus.assumeIsolated(body)
    }

    /// Emits, recording instead of throwing (for work with nobody to report to).
    func emit(_ what: String, _ body: (isolated DBusConnection) throws -> Void) {
        do {
            try withBus(body)
        } catch {
            emissionErrors.append("\(what): \(error)")
        }
    }

    /// A method handler that forwards calls to `route` on this actor; holds the actor weakly (the connection
    /// keeps its handlers, and we keep the connection).
    nonisolated func handler(
        _ route: @escaping @Sendable (isolated FakeBlueZ, DBusMethodCall) -> DBusReply
    ) -> DBusMethodHandler {
        { [weak self] _, call in
            guard let self else { return .error(name: "org.bluez.Error.Failed", message: "Shutting down") }
            return self.assumeIsolated { route($0, call) }
        }
    }

    private func exportInitialObjects() throws {
        try withBus { bus in
            try bus.export("/", interfaces: [], objectManager: true)
            try bus.export(
                "/org/bluez",
                interfaces: [
                    DBusExportedInterface(
                        Self.agentManagerInterface, methodHandler: handler { $0.handleAgentManager($1) })
                ])
        }
        try exportAdapter()
        let given = extra.map { peripheral in
            let entry = FakeBlueZScenario.Peripheral(
                kind: .chestStrap, address: peripheral.identity.address, name: peripheral.identity.name, known: true)
            return (entry, Optional(peripheral))
        }
        for (entry, peripheral) in scenario.peripherals.map({ ($0, (any SimulatedPeripheral)?.none) }) + given {
            let device = FakeBlueZDevice(entry: entry, peripheral: peripheral)
            let path = Self.devicePath(entry.address)
            guard devices[path] == nil else { continue }
            devices[path] = device
            devicePaths.append(path)
            if device.exported { try exportDevice(at: path, rssi: nil) }
        }
    }

    /// Serves `/org/bluez/hci0` (InterfacesAdded once the name is ours).
    func exportAdapter() throws {
        let adapterAddress = scenario.adapterAddress ?? "00:AA:01:00:00:01"
        let adapterName = scenario.adapterName ?? "fakebluez"
        try withBus { bus in
            try bus.export(
                Self.adapterPath,
                interfaces: [
                    DBusExportedInterface(
                        Self.adapterInterface,
                        properties: [
                            "Address": .string(adapterAddress.uppercased()), "AddressType": .string("public"),
                            "Name": .string(adapterName), "Alias": .string(adapterName), "Class": .uint32(0),
                            "Powered": .boolean(true), "Discoverable": .boolean(false),
                            "DiscoverableTimeout": .uint32(180), "Pairable": .boolean(true),
                            "PairableTimeout": .uint32(0), "Discovering": .boolean(false),
                            "UUIDs": .strings(Self.adapterUUIDs), "Modalias": .string("usb:v1D6Bp0246d0542"),
                            "Roles": .strings(["central", "peripheral"]),
                        ],
                        methodHandler: handler { $0.handleAdapter($1) })
                ])
        }
    }

    /// Services a real adapter lists (GAP, GATT, Device Information).
    static let adapterUUIDs = [
        "00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
        "0000180a-0000-1000-8000-00805f9b34fb",
    ]
}

/// A FakeBlueZ failure that is not a D-Bus error.
public struct FakeBlueZError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var message: String
    /// A failure described by `message`.
    public init(message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
