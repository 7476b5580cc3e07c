public import Support

/// The central role: what the gateway needs from a Bluetooth stack. Implemented by the BlueZ client (over
/// D-Bus) and by the fakes, so every layer above runs unchanged against both.
///
/// Shaped after BlueZ (see ARCHITECTURE.md): the stack owns connections, pairing and reconnection; property
/// changes (``CentralEvent/connectionChanged(_:connected:)``, ``CentralEvent/servicesResolved(_:resolved:)``)
/// are the truth and method results only report errors; a peripheral is ready when it is connected, its
/// services are resolved and the characteristics it needs are found by UUID (paths and handles change).
public protocol Central: AnyObject, Sendable {
    /// A new stream of everything the stack reports from now on. Implementations say their buffering policy
    /// and count any event they ever drop (``CentralStatistics/droppedEvents``); notifications are never
    /// dropped silently.
    func events() -> AsyncStream<CentralEvent>

    /// The adapters (controllers) the stack has now.
    func adapters() async throws(CentralError) -> [AdapterInfo]

    /// Peripherals the stack already knows (paired, cached or seen), connected ones included.
    func knownPeripherals() async throws(CentralError) -> [PeripheralInfo]

    /// Starts discovery for peripherals advertising any of `services` (all when empty); results arrive as
    /// ``CentralEvent/discovered(_:)``. Discovery already running counts as success.
    func startDiscovery(services: [BluetoothUUID], on adapter: AdapterAddress?) async throws(CentralError)

    func stopDiscovery(on adapter: AdapterAddress?) async throws(CentralError)

    /// Asks the stack to connect; returns when the stack accepted or refused. Readiness is signalled by events.
    /// At most one connect is in flight per adapter; a connect not answered within `timeout` is cancelled and
    /// throws ``CentralError/Kind/timeout``.
    func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError)

    func disconnect(_ peripheral: PeripheralID) async throws(CentralError)

    /// Pairs (bonds) with the peripheral through the stack's agent; only for sensors that need it.
    func pair(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError)

    /// Marks the peripheral trusted, so the stack reconnects it on its own.
    func setTrusted(_ peripheral: PeripheralID, _ trusted: Bool) async throws(CentralError)

    /// Forgets the peripheral (bond and cache) in the stack.
    func remove(_ peripheral: PeripheralID) async throws(CentralError)

    /// The characteristics found by the last service resolution. Look them up by UUID after every resolve.
    func characteristics(of peripheral: PeripheralID) async throws(CentralError) -> [CharacteristicInfo]

    func read(_ characteristic: CharacteristicInfo, of peripheral: PeripheralID) async throws(CentralError) -> [UInt8]

    func write(
        _ value: [UInt8], to characteristic: CharacteristicInfo, of peripheral: PeripheralID, withResponse: Bool
    ) async throws(CentralError)

    /// Subscribes to notifications or indications; values arrive as ``CentralEvent/notification(_:)``.
    /// Idempotent: call it again after every reconnect.
    func startNotifications(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID, mode: NotifyMode
    ) async throws(CentralError)

    func stopNotifications(_ characteristic: CharacteristicInfo, of peripheral: PeripheralID) async throws(CentralError)

    /// Counters since the central started.
    func statistics() async -> CentralStatistics

    /// Returns once everything the stack reported before this call has been passed on as events: the stop's
    /// barrier for a sensor whose link went down just before (no StopNotify orders its last values).
    func flushEvents() async
}

/// An adapter's Bluetooth address (`00:1A:7D:DA:71:13`), which identifies it across resets; `hci0` does not.
public typealias AdapterAddress = String

/// A peripheral as one adapter sees it: adapter address plus the peripheral's address.
public struct PeripheralID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var adapter: AdapterAddress
    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var address: String

    public init(adapter: AdapterAddress, address: String) {
        self.adapter = adapter.uppercased()
        self.address = address.uppercased()
    }

    public var description: String { "\(address) via \(adapter)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.adapter, lhs.address) < (rhs.adapter, rhs.address) }
}

public struct AdapterInfo: Hashable, Sendable {
    public var address: AdapterAddress
    /// The kernel name (`hci0`), for people; may change after a controller reset.
    public var name: String
    public var powered: Bool
    public var discovering: Bool
    /// Whether the adapter can act as an LE central.
    public var supportsCentral: Bool

    public init(address: AdapterAddress, name: String, powered: Bool, discovering: Bool, supportsCentral: Bool) {
        self.address = address.uppercased()
        self.name = name
        self.powered = powered
        self.discovering = discovering
        self.supportsCentral = supportsCentral
    }
}

public struct PeripheralInfo: Hashable, Sendable {
    public var id: PeripheralID
    public var name: String?
    /// Advertised or resolved service UUIDs.
    public var services: [BluetoothUUID]
    public var rssi: Int16?
    public var paired: Bool
    public var trusted: Bool
    public var connected: Bool
    public var servicesResolved: Bool

    public init(
        id: PeripheralID, name: String? = nil, services: [BluetoothUUID] = [], rssi: Int16? = nil,
        paired: Bool = false, trusted: Bool = false, connected: Bool = false, servicesResolved: Bool = false
    ) {
        self.id = id
        self.name = name
        self.services = services
        self.rssi = rssi
        self.paired = paired
        self.trusted = trusted
        self.connected = connected
        self.servicesResolved = servicesResolved
    }
}

/// What a characteristic can do (the GATT characteristic properties).
public struct CharacteristicProperties: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
}

/// A characteristic found on a connected peripheral. `handle` is the stack's own reference (a D-Bus object
/// path for BlueZ); it is valid until the next service resolution.
public struct CharacteristicInfo: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var service: BluetoothUUID
    public var properties: CharacteristicProperties
    public var handle: String

    public init(uuid: BluetoothUUID, service: BluetoothUUID, properties: CharacteristicProperties, handle: String) {
        self.uuid = uuid
        self.service = service
        self.properties = properties
        self.handle = handle
    }
}

/// When a value arrived: a monotonic reading (for ordering and intervals, immune to clock steps) and the wall
/// clock at the same moment (microseconds since the Unix epoch, UTC).
public struct Timestamp: Hashable, Sendable, Comparable {
    /// Time since an arbitrary fixed start (the process, the trace, the simulation).
    public var monotonic: Duration
    public var wallMicroseconds: Int64

    public init(monotonic: Duration, wallMicroseconds: Int64) {
        self.monotonic = monotonic
        self.wallMicroseconds = wallMicroseconds
    }

    /// Both readings of `clock`, now.
    public init(reading clock: any Clock) {
        self.init(monotonic: clock.now, wallMicroseconds: clock.wallMicroseconds)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.monotonic < rhs.monotonic }
}

/// One value a peripheral sent: the point where live data and trace replay meet.
public struct GATTNotification: Hashable, Sendable {
    public var peripheral: PeripheralID
    public var characteristic: BluetoothUUID
    public var value: [UInt8]
    public var receivedAt: Timestamp

    public init(peripheral: PeripheralID, characteristic: BluetoothUUID, value: [UInt8], receivedAt: Timestamp) {
        self.peripheral = peripheral
        self.characteristic = characteristic
        self.value = value
        self.receivedAt = receivedAt
    }
}

/// What a central reports.
public enum CentralEvent: Hashable, Sendable {
    /// The stack is reachable (again): a new bluetoothd, for example. Caches were rebuilt.
    case stackAvailable
    /// The stack went away (bluetoothd stopped). Every connection is gone.
    case stackUnavailable
    case adapterAdded(AdapterInfo)
    case adapterRemoved(AdapterAddress)
    case discovered(PeripheralInfo)
    case peripheralRemoved(PeripheralID)
    case connectionChanged(PeripheralID, connected: Bool)
    case servicesResolved(PeripheralID, resolved: Bool)
    case notification(GATTNotification)
}

/// Counters a central keeps.
public struct CentralStatistics: Hashable, Sendable {
    public var notifications: Int
    public var droppedEvents: Int
    /// Events of every kind passed on to each event stream so far (a test waits until they were handled).
    public var events: Int
    public init(notifications: Int = 0, droppedEvents: Int = 0, events: Int = 0) {
        self.notifications = notifications
        self.droppedEvents = droppedEvents
        self.events = events
    }
}

/// A failed central operation, classified the way a session must react to it.
public struct CentralError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The link failed in a way that a retry with backoff fixes (aborted, timed out, busy).
        case transient
        /// The peripheral (or its object in the stack) is gone: rediscover.
        case deviceMissing
        /// The stack thinks an operation is already in progress: disconnect once, then retry patiently.
        case inProgress
        /// Pairing or encryption failed.
        case authentication
        /// No reply within the deadline.
        case timeout
        /// The stack (or an adapter) is not there.
        case unavailable
        /// The operation is not allowed or not supported on this characteristic.
        case notPermitted
        case other
    }

    public var kind: Kind
    /// The operation, e.g. `Connect`.
    public var operation: String
    /// The stack's own error name and message, e.g. `org.bluez.Error.Failed: le-connection-abort-by-local`.
    public var detail: String

    public init(_ kind: Kind, operation: String, detail: String) {
        self.kind = kind
        self.operation = operation
        self.detail = detail
    }

    public var description: String { "\(operation) failed (\(kind.rawValue)): \(detail)" }
}
