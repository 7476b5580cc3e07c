public import Foundation
public import GATT
public import Health

/// What every sample of one sensor is tagged with: who wrote it, which device measured it, who wore it, where.
public struct SensorContext: Hashable, Sendable {
    /// The writing source: wearhouse and its version.
    public var source: Source
    /// From Device Information, with the BLE address as the local identifier.
    public var device: Device
    /// Who wears the sensor.
    public var subject: String?
    /// A multi-user scale's or cuff's user indexes and whose they are (``SensorSubjects``); an index not here
    /// gets ``subject``.
    public var subjectsByUserIndex: [UInt8: String] = [:]
    /// Body Sensor Location 0x2A38 (0-6, HealthKit's `heartRateSensorLocation`), read or configured.
    public var bodySensorLocation: UInt8?
    /// RSC Sensor Location 0x2A5D (0-16), read or configured.
    public var sensorLocation: UInt8?
    /// A thermometer's Temperature Type 0x2A1D (1-9, HealthKit's `bodyTemperatureSensorLocation`), read at
    /// connect; a measurement's own type wins.
    public var temperatureType: UInt8?
    /// A health device's clock found off at connect (its Current Time against the gateway's): its stamps are
    /// corrected by it (``DeviceClockCorrection``).
    public var deviceClock: DeviceClockCorrection?
    /// The characteristics the sensor is subscribed to (or about to be): a trainer that sends both Cycling
    /// Power and Indoor Bike Data has its power from the first alone, from its first value on.
    public var characteristics: Set<BluetoothUUID> = []
    /// Whether the footpod's walking/running bit means anything (RSC Feature bit 2).
    public var reportsWalkingOrRunning: Bool
    /// The time zone whose UTC offset is kept beside each sample's start.
    public var timeZone: TimeZone

    public init(
        source: Source, device: Device, subject: String? = nil, bodySensorLocation: UInt8? = nil,
        sensorLocation: UInt8? = nil, reportsWalkingOrRunning: Bool = false, timeZone: TimeZone = .current
    ) {
        self.source = source
        self.device = device
        self.subject = subject
        self.bodySensorLocation = bodySensorLocation
        self.sensorLocation = sensorLocation
        self.reportsWalkingOrRunning = reportsWalkingOrRunning
        self.timeZone = timeZone
    }

    /// The UTC offset at `instant`, in seconds.
    func offset(at instant: Instant) -> Int32 {
        let date = Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)
        return Int32(timeZone.secondsFromGMT(for: date))
    }

    /// Metadata for heart-rate types.
    var heartRateMetadata: [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        if let bodySensorLocation {
            metadata[MetadataKey.heartRateSensorLocation] = .number(Double(bodySensorLocation))
        }
        if let serial = device.serialNumber { metadata[MetadataKey.deviceSerialNumber] = .string(serial) }
        return metadata
    }

    /// Metadata for motion types (RSC, steps).
    var motionMetadata: [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        if let sensorLocation { metadata[MetadataKey.sensorLocation] = .number(Double(sensorLocation)) }
        if let serial = device.serialNumber { metadata[MetadataKey.deviceSerialNumber] = .string(serial) }
        return metadata
    }
}
