/// RSC Measurement (0x2A53), notified by running footpods.
///
/// ```
/// offset  size  field
/// 0       1     flags            bit0 stride present, bit1 distance present, bit2 running (else walking), 3-7 reserved
/// 1       2     speed            uint16, 1/256 m/s
/// 3       1     cadence          uint8, 1/min (some sensors send steps per minute, others strides: do not rescale)
/// 4       0|2   stride length    uint16, 1/100 m
/// +       0|4   total distance   uint32, 1/10 m, cumulative since the sensor's last reset
/// ```
///
/// There is no step count: steps are estimated from cadence over time. The walking/running bit means
/// something only when ``RSCFeature/walkingOrRunningStatusSupported`` is set.
public struct RSCMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.rscMeasurement
    public static let name = "rsc-measurement"

    /// Instantaneous speed in 1/256 m/s.
    public var speed: UInt16
    /// Instantaneous cadence in 1/min.
    public var cadence: UInt8
    /// Instantaneous stride length in 1/100 m.
    public var strideLength: UInt16?
    /// Total distance in 1/10 m.
    public var totalDistance: UInt32?
    /// Flags bit 2: running (true) or walking (false).
    public var isRunning: Bool
    /// Flag bits 3-7, reserved.
    public var reservedFlags: UInt8

    public init(
        speed: UInt16, cadence: UInt8, strideLength: UInt16? = nil, totalDistance: UInt32? = nil,
        isRunning: Bool = false, reservedFlags: UInt8 = 0
    ) {
        self.speed = speed
        self.cadence = cadence
        self.strideLength = strideLength
        self.totalDistance = totalDistance
        self.isRunning = isRunning
        self.reservedFlags = reservedFlags & 0xF8
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        speed = try reader.readUInt16("instantaneous_speed")
        cadence = try reader.readUInt8("instantaneous_cadence")
        strideLength = flags & 0x01 == 0 ? nil : try reader.readUInt16("instantaneous_stride_length")
        totalDistance = flags & 0x02 == 0 ? nil : try reader.readUInt32("total_distance")
        isRunning = flags & 0x04 != 0
        reservedFlags = flags & 0xF8
    }

    public var flags: UInt8 {
        var flags = reservedFlags & 0xF8
        if strideLength != nil { flags |= 0x01 }
        if totalDistance != nil { flags |= 0x02 }
        if isRunning { flags |= 0x04 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 10)
        writer.write(flags)
        writer.write(speed)
        writer.write(cadence)
        if let strideLength { writer.write(strideLength) }
        if let totalDistance { writer.write(totalDistance) }
        return writer.bytes
    }

    /// Speed in m/s.
    public var metersPerSecond: Double { Double(speed) / 256 }
    /// Stride length in m.
    public var strideLengthMeters: Double? { strideLength.map { Double($0) / 100 } }
    /// Total distance in m.
    public var totalDistanceMeters: Double? { totalDistance.map { Double($0) / 10 } }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("instantaneous_speed", .double(metersPerSecond), unit: "m/s"),
            Field("instantaneous_cadence", .int(cadence), unit: "count/min"),
            Field("instantaneous_stride_length", .optional(strideLengthMeters), unit: "m"),
            Field("total_distance", .optional(totalDistanceMeters), unit: "m"),
            Field("walking_or_running", .string(isRunning ? "running" : "walking")),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// RSC Feature (0x2A54): which optional RSC fields and procedures the sensor supports. 16 bits, read once.
public struct RSCFeature: CharacteristicValue, OptionSet, Hashable {
    public static let uuid = BluetoothUUID.rscFeature
    public static let name = "rsc-feature"

    public static let strideLengthSupported = RSCFeature(rawValue: 1 << 0)
    public static let totalDistanceSupported = RSCFeature(rawValue: 1 << 1)
    public static let walkingOrRunningStatusSupported = RSCFeature(rawValue: 1 << 2)
    public static let calibrationSupported = RSCFeature(rawValue: 1 << 3)
    public static let multipleSensorLocationsSupported = RSCFeature(rawValue: 1 << 4)

    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeFeatureBits(bytes)
    }

    public func encoded() -> [UInt8] { encodeFeatureBits(rawValue) }

    public var fields: [Field] {
        [
            Field("value", .int(rawValue)),
            Field("stride_length_supported", .bool(contains(.strideLengthSupported))),
            Field("total_distance_supported", .bool(contains(.totalDistanceSupported))),
            Field("walking_or_running_status_supported", .bool(contains(.walkingOrRunningStatusSupported))),
            Field("calibration_supported", .bool(contains(.calibrationSupported))),
            Field("multiple_sensor_locations_supported", .bool(contains(.multipleSensorLocationsSupported))),
            Field("reserved_bits", .int(rawValue & 0xFFE0)),
        ]
    }
}

/// CSC Feature (0x2A5C): bit 0 wheel data, bit 1 crank data, bit 2 multiple sensor locations.
public struct CSCFeature: CharacteristicValue, OptionSet, Hashable {
    public static let uuid = BluetoothUUID.cscFeature
    public static let name = "csc-feature"

    public static let wheelRevolutionDataSupported = CSCFeature(rawValue: 1 << 0)
    public static let crankRevolutionDataSupported = CSCFeature(rawValue: 1 << 1)
    public static let multipleSensorLocationsSupported = CSCFeature(rawValue: 1 << 2)

    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeFeatureBits(bytes)
    }

    public func encoded() -> [UInt8] { encodeFeatureBits(rawValue) }

    public var fields: [Field] {
        [
            Field("value", .int(rawValue)),
            Field("wheel_revolution_data_supported", .bool(contains(.wheelRevolutionDataSupported))),
            Field("crank_revolution_data_supported", .bool(contains(.crankRevolutionDataSupported))),
            Field("multiple_sensor_locations_supported", .bool(contains(.multipleSensorLocationsSupported))),
            Field("reserved_bits", .int(rawValue & 0xFFF8)),
        ]
    }
}

func decodeFeatureBits(_ bytes: [UInt8]) throws(DecodeError) -> UInt16 {
    try requireLength(bytes, 2)
    return try ByteReader.read(bytes) { (reader) throws(DecodeError) in try reader.readUInt16("feature") }
}

func encodeFeatureBits(_ value: UInt16) -> [UInt8] {
    var writer = ByteWriter(capacity: 2)
    writer.write(value)
    return writer.bytes
}
