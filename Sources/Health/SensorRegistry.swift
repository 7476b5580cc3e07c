public import Support

/// A sensor enrolled with `wearhouse pair`: what the gateway service connects to and how it tags the samples.
public struct RegisteredSensor: Hashable, Sendable {
    /// The BLE address, the registry's key: upper case `AA:BB:CC:DD:EE:FF` (see ``normalizedAddress(_:)``).
    public var address: String
    /// The address of the adapter it was paired through; `nil`: any adapter.
    public var adapter: String?
    /// The advertised name.
    public var name: String?
    /// The user's label for it.
    public var label: String?
    /// Who wears it: the subject of its samples.
    public var subject: String?
    /// The user's override of the sensor location (`chest`, `wrist`, ...); `nil`: ask the sensor.
    public var location: String?
    /// Device Information as read from the sensor.
    public var device: Device?
    /// The service UUIDs it offers, as canonical strings.
    public var services: [String]
    /// Bonded through BlueZ.
    public var paired: Bool
    public var notifyMode: NotifyMode
    public var enrolledAt: Instant

    public init(
        address: String, adapter: String? = nil, name: String? = nil, label: String? = nil, subject: String? = nil,
        location: String? = nil, device: Device? = nil, services: [String] = [], paired: Bool = false,
        notifyMode: NotifyMode = .properties, enrolledAt: Instant
    ) {
        self.address = address
        self.adapter = adapter
        self.name = name
        self.label = label
        self.subject = subject
        self.location = location
        self.device = device
        self.services = services
        self.paired = paired
        self.notifyMode = notifyMode
        self.enrolledAt = enrolledAt
    }

    /// `address` in the registry's form, upper case `AA:BB:CC:DD:EE:FF`, or `nil` when it is not a BLE address
    /// (six two-digit hex groups separated by colons, any case).
    public static func normalizedAddress(_ address: String) -> String? {
        let groups = address.split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count == 6, groups.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
            return nil
        }
        return address.uppercased()
    }
}

/// What the running gateway last reported about one sensor, for `wearhouse sensors` in another process.
public struct SensorStatus: Hashable, Sendable {
    /// The sensor's address, as in ``RegisteredSensor/address``.
    public var address: String
    /// `connecting`, `ready`, `backoff`, ...: free text from the gateway.
    public var state: String
    public var batteryPercent: Int?
    public var lastSampleAt: Instant?
    /// Counters since the service started.
    public var notifications: Int64
    public var samples: Int64
    public var malformed: Int64
    public var dropped: Int64
    public var reconnects: Int64
    public var updatedAt: Instant

    public init(
        address: String, state: String, batteryPercent: Int? = nil, lastSampleAt: Instant? = nil,
        notifications: Int64 = 0, samples: Int64 = 0, malformed: Int64 = 0, dropped: Int64 = 0, reconnects: Int64 = 0,
        updatedAt: Instant
    ) {
        self.address = address
        self.state = state
        self.batteryPercent = batteryPercent
        self.lastSampleAt = lastSampleAt
        self.notifications = notifications
        self.samples = samples
        self.malformed = malformed
        self.dropped = dropped
        self.reconnects = reconnects
        self.updatedAt = updatedAt
    }
}

/// An address that is not a BLE address.
public struct InvalidSensorAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    public var address: String

    public init(address: String) {
        self.address = address
    }

    public var description: String { "'\(address)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)" }
}

/// The sensors a store knows: enrolled by `wearhouse pair`, read by the gateway service, with the status the
/// service reports so that other processes can show it. Addresses are normalized
/// (``RegisteredSensor/normalizedAddress(_:)``); an invalid one throws ``InvalidSensorAddressError``.
public protocol SensorRegistry: Sendable {
    /// Inserts the sensor, or replaces the one with its address.
    func register(_ sensor: RegisteredSensor) async throws

    /// Every registered sensor, sorted by address.
    func registeredSensors() async throws -> [RegisteredSensor]

    /// Removes the sensor and its status; returns whether it was registered.
    func forgetSensor(_ address: String) async throws -> Bool

    /// Inserts or replaces these statuses, by address, in one transaction. Meant to be called every few seconds:
    /// cheap, and never in the way of sample writes.
    func updateStatus(_ statuses: [SensorStatus]) async throws

    /// Every reported status, sorted by address.
    func sensorStatuses() async throws -> [SensorStatus]

    /// A number that changes whenever the registry changes (a sensor registered, changed or forgotten) and not
    /// when statuses do, so that a running service can poll it cheaply and reload the sensors when it moves.
    func registryVersion() async throws -> Int64
}
