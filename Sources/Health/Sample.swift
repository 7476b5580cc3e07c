public import Foundation

/// A metadata value: HealthKit's metadata dictionaries hold strings, numbers, dates and quantities.
public enum MetadataValue: Hashable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case date(Instant)
    /// A value with its HealthKit unit string.
    case quantity(Double, unit: String)
}

/// Metadata keys with HealthKit's names (without the `HKMetadataKey` prefix) where one exists.
public enum MetadataKey {
    /// BLE Body Sensor Location 0-6, which HealthKit's `HKHeartRateSensorLocation` mirrors one to one.
    public static let heartRateSensorLocation = "heartRateSensorLocation"
    public static let deviceSerialNumber = "deviceSerialNumber"
    /// A client's own identifier for a sample; with `syncVersion`, makes app writes idempotent.
    public static let externalUUID = "externalUUID"
    public static let syncVersion = "syncVersion"
    /// The IANA time zone where the sample was taken.
    public static let timeZone = "timeZone"
    public static let wasUserEntered = "wasUserEntered"
    /// RSC Sensor Location 0-16 (wearhouse's own key; HealthKit has none).
    public static let sensorLocation = "sensorLocation"
    /// True when the value was estimated rather than measured (steps from cadence).
    public static let wasEstimated = "wasEstimated"
    /// The sensor reported no skin contact while measuring.
    public static let sensorContactLost = "sensorContactLost"
    /// Root mean square of successive RR differences over the same window, in ms.
    public static let heartRateVariabilityRMSSD = "heartRateVariabilityRMSSD"
}

/// One quantity over an interval (or at an instant when `start == end`): HealthKit's `HKQuantitySample`.
///
/// Immutable once written: a store never updates a sample, it deletes (leaving a tombstone) or replaces it by
/// a newer version of the same external UUID.
public struct QuantitySample: Hashable, Sendable, Identifiable {
    public var id: UUID
    public var type: HealthType
    public var start: Instant
    public var end: Instant
    /// The UTC offset at `start`, in seconds (local wall time = start + offset).
    public var startOffsetSeconds: Int32
    /// The value in the type's canonical unit.
    public var value: Double
    public var source: Source
    public var device: Device?
    /// Who wore the sensor; a gateway serves many people.
    public var subject: String?
    public var metadata: [String: MetadataValue]

    public init(
        id: UUID = .timeOrdered(), type: HealthType, start: Instant, end: Instant, startOffsetSeconds: Int32 = 0,
        value: Double, source: Source, device: Device? = nil, subject: String? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.type = type
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.value = value
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
    }

    public var provenance: Provenance { Provenance(source: source.identifier, device: device?.key) }
}

/// One beat of a heartbeat series: time since the series start, the RR interval that ended it, and whether
/// beats are missing before it (contact lost, notifications dropped).
public struct Beat: Hashable, Sendable {
    public var offsetMilliseconds: Double
    public var rrMilliseconds: Double
    public var precededByGap: Bool

    public init(offsetMilliseconds: Double, rrMilliseconds: Double, precededByGap: Bool = false) {
        self.offsetMilliseconds = offsetMilliseconds
        self.rrMilliseconds = rrMilliseconds
        self.precededByGap = precededByGap
    }
}

/// Beat-to-beat data: HealthKit's `HKHeartbeatSeriesSample`.
public struct HeartbeatSeriesSample: Hashable, Sendable, Identifiable {
    public var id: UUID
    public var start: Instant
    public var end: Instant
    public var startOffsetSeconds: Int32
    public var beats: [Beat]
    public var source: Source
    public var device: Device?
    public var subject: String?
    public var metadata: [String: MetadataValue]

    public init(
        id: UUID = .timeOrdered(), start: Instant, end: Instant, startOffsetSeconds: Int32 = 0, beats: [Beat],
        source: Source, device: Device? = nil, subject: String? = nil, metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.beats = beats
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
    }

    public var provenance: Provenance { Provenance(source: source.identifier, device: device?.key) }
}
