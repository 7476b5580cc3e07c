public import GATT

/// One line of a trace file (see `docs/trace-format.md`).
///
/// A trace is a header, then sensors, connection events and values in the order they happened. Every line stands
/// alone, so a trace can be appended to while it is read, and a crash loses at most the line being written.
public enum TraceRecord: Hashable, Sendable {
    /// The first line: the format version and how the trace was made.
    case header(TraceHeader)
    /// A later recording appended to the same file (the recorder was restarted): the same fields as the header.
    /// Replay ends every sensor's run here, as the service's stop did.
    case session(TraceHeader)
    /// A sensor started streaming: who it is, what it reported about itself and how its samples are tagged.
    ///
    /// Boxed: a sensor is 265 bytes, five times a value, and every record (values by the million) would be that
    /// large and copied as such.
    indirect case sensor(TraceSensor)
    /// A sensor connected or disconnected.
    case connection(TraceConnection)
    /// A value the sensor sent (notification, indication) or answered to a read.
    case value(TraceValue)
}

/// What the header (and every later session line) says about a recording.
public struct TraceHeader: Hashable, Sendable {
    /// The version this code writes; readers refuse newer ones.
    public static let currentVersion = 1

    public var version: Int
    /// When the recording started (wall clock, microseconds since the Unix epoch).
    public var createdWallMicroseconds: Int64?
    /// The program that wrote it, e.g. `wearhouse 0.1.0`.
    public var recorder: String?
    /// Where the data came from: `live`, `btsnoop:<file>`, `bleak-log:<file>`.
    public var origin: String?
    /// The sample builder's heartbeat series window when recorded, milliseconds.
    public var seriesWindowMilliseconds: Int64?
    /// The sample builder's gap threshold when recorded, milliseconds.
    public var gapThresholdMilliseconds: Int64?

    public init(
        version: Int = TraceHeader.currentVersion, createdWallMicroseconds: Int64? = nil, recorder: String? = nil,
        origin: String? = nil, seriesWindowMilliseconds: Int64? = nil, gapThresholdMilliseconds: Int64? = nil
    ) {
        self.version = version
        self.createdWallMicroseconds = createdWallMicroseconds
        self.recorder = recorder
        self.origin = origin
        self.seriesWindowMilliseconds = seriesWindowMilliseconds
        self.gapThresholdMilliseconds = gapThresholdMilliseconds
    }
}

/// A sensor's identity and Device Information, and how its samples were tagged when it started streaming.
public struct TraceSensor: Hashable, Sendable {
    /// The largest clock error a sensor line may hold: a hundred years.
    public static let maximumClockOffsetMilliseconds: Int64 = 100 * 366 * 86_400_000

    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var address: String
    /// The adapter it was reached through, if known.
    public var adapter: String?
    /// The device name the samples carry (the enrolment label, else the advertised name).
    public var name: String?
    /// A label given by the user, when it differs from `name`.
    public var label: String?
    public var manufacturer: String?
    public var model: String?
    public var serialNumber: String?
    public var hardwareRevision: String?
    public var firmwareRevision: String?
    public var softwareRevision: String?
    /// Body Sensor Location 0x2A38 (0-6).
    public var bodySensorLocation: UInt8?
    /// RSC Sensor Location 0x2A5D (0-16).
    public var sensorLocation: UInt8?
    /// RSC Feature bit 2: the walking/running status means something.
    public var reportsWalkingOrRunning: Bool
    /// Who wore it.
    public var subject: String?
    /// The source its samples were written as.
    public var sourceIdentifier: String?
    public var sourceVersion: String?
    /// The time zone whose UTC offsets the samples carry (an IANA identifier).
    public var timeZone: String?
    /// A thermometer's Temperature Type 0x2A1D, read at connect (1-9).
    public var temperatureType: UInt8?
    /// A health device's clock error found at connect, in milliseconds (its clock minus the gateway's), within
    /// ``maximumClockOffsetMilliseconds``; its stamps were corrected by it.
    public var clockOffsetMilliseconds: Int64?
    /// When the gateway set that device's clock (ms since the epoch), if it did.
    public var clockSetMilliseconds: Int64?
    /// The characteristics subscribed to.
    public var characteristics: [BluetoothUUID]
    /// When it started streaming.
    public var at: Timestamp?

    public init(
        address: String, adapter: String? = nil, name: String? = nil, label: String? = nil,
        manufacturer: String? = nil, model: String? = nil, serialNumber: String? = nil,
        hardwareRevision: String? = nil, firmwareRevision: String? = nil, softwareRevision: String? = nil,
        bodySensorLocation: UInt8? = nil, sensorLocation: UInt8? = nil, reportsWalkingOrRunning: Bool = false,
        subject: String? = nil, sourceIdentifier: String? = nil, sourceVersion: String? = nil,
        timeZone: String? = nil, temperatureType: UInt8? = nil, clockOffsetMilliseconds: Int64? = nil,
        clockSetMilliseconds: Int64? = nil, characteristics: [BluetoothUUID] = [], at: Timestamp? = nil
    ) {
        self.address = address.uppercased()
        self.adapter = adapter?.uppercased()
        self.name = name
        self.label = label
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.hardwareRevision = hardwareRevision
        self.firmwareRevision = firmwareRevision
        self.softwareRevision = softwareRevision
        self.bodySensorLocation = bodySensorLocation
        self.sensorLocation = sensorLocation
        self.reportsWalkingOrRunning = reportsWalkingOrRunning
        self.subject = subject
        self.sourceIdentifier = sourceIdentifier
        self.sourceVersion = sourceVersion
        self.timeZone = timeZone
        self.temperatureType = temperatureType
        self.clockOffsetMilliseconds = clockOffsetMilliseconds
        self.clockSetMilliseconds = clockSetMilliseconds
        self.characteristics = characteristics
        self.at = at
    }
}

/// A sensor's link came up or went down.
public struct TraceConnection: Hashable, Sendable {
    public var address: String
    public var connected: Bool
    public var at: Timestamp

    public init(address: String, connected: Bool, at: Timestamp) {
        self.address = address.uppercased()
        self.connected = connected
        self.at = at
    }
}

/// A raw characteristic value, exactly as it arrived.
public struct TraceValue: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case notification
        case indication
        /// The answer to a read request.
        case read
    }

    public var kind: Kind
    public var address: String
    public var characteristic: BluetoothUUID
    public var bytes: [UInt8]
    public var at: Timestamp

    public init(kind: Kind, address: String, characteristic: BluetoothUUID, bytes: [UInt8], at: Timestamp) {
        self.kind = kind
        self.address = address.uppercased()
        self.characteristic = characteristic
        self.bytes = bytes
        self.at = at
    }

    /// For a decoder that already holds the address in upper case (``ValueLineDecoder``, which interns it): the
    /// same value as the public initializer, without a copy of the address per value.
    init(kind: Kind, upperCaseAddress address: String, characteristic: BluetoothUUID, bytes: [UInt8], at: Timestamp) {
        self.kind = kind
        self.address = address
        self.characteristic = characteristic
        self.bytes = bytes
        self.at = at
    }

    /// The value as the gateway's ingest path sees it (`adapter` fills the peripheral's adapter address).
    public func notification(adapter: String) -> GATTNotification {
        GATTNotification(
            peripheral: PeripheralID(adapter: adapter, address: address), characteristic: characteristic,
            value: bytes, receivedAt: at)
    }
}
