public import DBus
public import GATT
internal import Glibc
internal import Support

/// A mirror of bluetoothd's objects (`org.bluez`): path → interface → properties, kept current from the
/// ObjectManager and Properties signals, with typed snapshots and a stream of ``CentralEvent``s.
///
/// Follows `docs/bluez.md` (R1-R3, R5): the matches (InterfacesAdded/Removed with `arg0path='/org/bluez/'`,
/// PropertiesChanged with `path_namespace='/org/bluez'`, NameOwnerChanged with `arg0='org.bluez'`) are installed
/// before `GetManagedObjects` (R1); when `org.bluez` loses its owner everything is dropped, and a new owner
/// rebuilds the cache (R2); removing an adapter drops its devices even without their own InterfacesRemoved (R3).
/// Adapters are identified by their `Address`, peripherals by adapter address plus device address (R5).
///
/// ```swift
/// let cache = BlueZObjectCache(bus: bus)
/// let events = await cache.events()
/// try await cache.start()
/// let adapters = await cache.adapters
/// ```
///
/// The actor runs on the connection's bus thread. bluetoothd's signals are read from one `sender='org.bluez'`
/// match, so they are applied in the order they were sent. bluetoothd 5.66 sends `ServicesResolved=true` before
/// the GATT objects' `InterfacesAdded`: the cache reads them with `GetManagedObjects` before applying it.
public actor BlueZObjectCache {
    /// The well-known name of bluetoothd.
    public static let serviceName = "org.bluez"
    static let adapter1 = "org.bluez.Adapter1"
    static let device1 = "org.bluez.Device1"
    static let service1 = "org.bluez.GattService1"
    static let characteristic1 = "org.bluez.GattCharacteristic1"

    let bus: DBusConnection
    let clock: @Sendable () -> Timestamp
    /// path → interface → property → value (values unwrapped from their variants).
    var objects: [String: [String: [String: DBusValue]]] = [:]
    /// Adapter addresses by path, kept after the adapter's properties are gone (for late device removals).
    var adapterAddresses: [String: AdapterAddress] = [:]
    /// The unique name owning `org.bluez`, `nil` while nobody does.
    public internal(set) var owner: String?
    var subscriptions: [DBusSignalSubscription] = []
    var consumers: [Task<Void, Never>] = []
    /// The signal stream the cache applies (the last subscription), how many of its signals were applied, and
    /// the ``drain()`` calls waiting for a count.
    var applied = 0
    var applying: DBusSignalSubscription?
    var drainWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// Events emitted so far (to every listener).
    public private(set) var emittedEvents = 0
    var listeners: [Int: AsyncStream<CentralEvent>.Continuation] = [:]
    var nextListener = 0
    /// Events a listener's buffer refused.
    public private(set) var droppedEvents = 0
    /// Signals that were not shaped as BlueZ sends them (ignored, counted).
    public internal(set) var malformedSignals = 0
    /// How often `ServicesResolved=true` made the cache read the device's GATT objects with `GetManagedObjects`.
    public internal(set) var gattObjectsAdopted = 0

    /// Runs on the bus thread, like the connection.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { bus.unownedExecutor }

    /// A cache over `bus` (not started). `clock` stamps notifications; the default reads the monotonic and
    /// real-time clocks.
    public init(bus: DBusConnection, clock: @escaping @Sendable () -> Timestamp = BlueZObjectCache.systemTimestamp) {
        self.bus = bus
        self.clock = clock
    }

    /// Installs the matches, then reads `GetManagedObjects` (when `org.bluez` has an owner) and starts
    /// applying signals. Without an owner the cache stays empty until one appears.
    ///
    /// - Throws: ``DBusError`` when a match cannot be installed or GetManagedObjects fails.
    public func start() async throws(DBusError) {
        guard subscriptions.isEmpty else { return }
        let objectManager = "org.freedesktop.DBus.ObjectManager"
        let rules = [
            DBusMatchRule(interface: objectManager, member: "InterfacesAdded", argumentPaths: [0: "/org/bluez/"]),
            DBusMatchRule(interface: objectManager, member: "InterfacesRemoved", argumentPaths: [0: "/org/bluez/"]),
            DBusMatchRule(
                interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", pathNamespace: "/org/bluez"),
            DBusMatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                arguments: [0: Self.serviceName]),
        ]
        do throws(DBusError) {
            for rule in rules {
                subscriptions.append(try await bus.subscribe(to: rule, bufferingPolicy: .unbounded))
            }
            // One stream for everything bluetoothd sends keeps its signals in order (one stream per match would
            // not: a burst is spread over several buffers). The R1 matches above stay installed, and their own
            // copies are discarded below.
            subscriptions.append(
                try await bus.subscribe(to: DBusMatchRule(sender: Self.serviceName), bufferingPolicy: .unbounded))
            do {
                owner = try await bus.nameOwner(Self.serviceName)
            } catch {
                // NameHasNoOwner: bluetoothd is not running yet; its NameOwnerChanged will come.
                guard error.kind == .remote else { throw error }
                owner = nil
            }
            if owner != nil { try await load() }
        } catch {
            stop()
            throw error
        }
        for (index, subscription) in subscriptions.enumerated() {
            switch index {
            // allowed: kept in `consumers`, cancelled by stop(); they live as long as the cache's matches
            case 0..<3: consumers.append(Task { for await _ in subscription {} })
            default:
                applying = subscription
                consumers.append(Task { await self.consume(subscription) })
            }
        }
    }

    /// Returns once every signal received on the bus before this call has been applied (and its events
    /// emitted); returns ``emittedEvents`` then. After a method call to bluetoothd returns, this covers
    /// everything bluetoothd signalled before it answered.
    public func drain() async -> Int {
        if let applying {
            let target = applying.enqueuedCount
            if applied < target { await withCheckedContinuation { drainWaiters.append((target, $0)) } }
        }
        return emittedEvents
    }

    /// Resumes the ``drain()`` calls that `applied` satisfies (all of them when `ended`).
    func resumeDrained(ended: Bool = false) {
        guard !drainWaiters.isEmpty else { return }
        let ready = drainWaiters.filter { ended || $0.target <= applied }
        drainWaiters.removeAll { ended || $0.target <= applied }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Removes the matches and finishes every event stream. The snapshots stay as they were.
    public func stop() {
        for consumer in consumers { consumer.cancel() }
        for subscription in subscriptions { subscription.cancel() }
        consumers = []
        subscriptions = []
        applying = nil
        resumeDrained(ended: true)
        for listener in listeners.values { listener.finish() }
        listeners = [:]
    }

    /// A new stream of every event from now on (unbounded unless told otherwise; refused events are counted in
    /// ``droppedEvents``). It ends on ``stop()``.
    public func events(
        bufferingPolicy: AsyncStream<CentralEvent>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<CentralEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CentralEvent.self, bufferingPolicy: bufferingPolicy)
        let id = nextListener
        nextListener += 1
        listeners[id] = continuation
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            // allowed: onTermination is synchronous and off the actor; removing the listener needs the actor
            Task { await self.removeListener(id) }
        }
        return stream
    }

    /// Forgets a listener whose stream ended.
    private func removeListener(_ id: Int) {
        listeners[id] = nil
    }

    /// Sends `event` to every listener, counting refusals.
    func emit(_ event: CentralEvent) {
        emittedEvents += 1
        for listener in listeners.values {
            if case .dropped = listener.yield(event) { droppedEvents += 1 }
        }
    }

    /// Replaces the whole cache with `GetManagedObjects` (only paths under `/org/bluez` are kept).
    func load() async throws(DBusError) {
        let all = try await bus.managedObjects(destination: Self.serviceName)
        objects = all.filter { $0.key == "/org/bluez" || $0.key.hasPrefix("/org/bluez/") }
        adapterAddresses = [:]
        for (path, interfaces) in objects {
            if let address = interfaces[Self.adapter1]?["Address"]?.stringValue {
                adapterAddresses[path] = address.uppercased()
            }
        }
    }

    // MARK: Snapshots

    /// Whether `org.bluez` has an owner.
    public var isAvailable: Bool { owner != nil }

    /// Every interface and property of the object at `path` (raw, for diagnostics).
    public func properties(at path: String) -> [String: [String: DBusValue]]? {
        objects[path]
    }

    /// The adapters, by address.
    public var adapters: [AdapterInfo] {
        objects.keys.sorted().compactMap { adapterInfo(at: $0) }
    }

    /// The peripherals with a Device1 object, sorted by ID.
    public var peripherals: [PeripheralInfo] {
        objects.keys.compactMap { peripheralInfo(at: $0) }.sorted { $0.id < $1.id }
    }

    /// The object path of a peripheral's Device1, or `nil`.
    public func devicePath(of peripheral: PeripheralID) -> String? {
        objects.keys.sorted().first { peripheralID(at: $0) == peripheral }
    }

    /// The object path of the adapter with `address`, or `nil`.
    public func adapterPath(of address: AdapterAddress) -> String? {
        objects.keys.sorted().first {
            objects[$0]?[Self.adapter1] != nil && adapterAddresses[$0] == address.uppercased()
        }
    }

    /// The GATT characteristics served under the peripheral's device object, in path order.
    public func characteristics(of peripheral: PeripheralID) -> [CharacteristicInfo] {
        guard let device = devicePath(of: peripheral) else { return [] }
        return objects.keys.filter { $0.hasPrefix(device + "/") }.sorted().compactMap { characteristicInfo(at: $0) }
    }

    /// The monotonic clock and the real-time clock, now.
    public static func systemTimestamp() -> Timestamp {
        Timestamp(reading: SystemClock())
    }
}
