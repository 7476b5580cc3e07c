/// Blood Pressure Measurement (0x2A35, indicated) and Intermediate Cuff Pressure (0x2A36, notified while the
/// cuff inflates) share one layout (Blood Pressure service 0x1810):
///
/// ```
/// offset  size  field
/// 0       1     flags        bit0 kPa (else mmHg), 1 time stamp, 2 pulse rate, 3 user ID, 4 measurement status,
///                            5-7 reserved
/// 1       2     systolic     SFLOAT (the current cuff pressure in Intermediate Cuff Pressure)
/// 3       2     diastolic    SFLOAT (NaN in Intermediate Cuff Pressure)
/// 5       2     MAP          SFLOAT, mean arterial pressure (NaN in Intermediate Cuff Pressure)
/// +       0|7   time stamp   Date Time
/// +       0|2   pulse rate   SFLOAT, beats per minute
/// +       0|1   user ID      uint8, 255 = unknown user
/// +       0|2   status       16 bits: 0 body movement, 1 cuff too loose, 2 irregular pulse,
///                            3-4 pulse rate range (0 within, 1 above upper limit, 2 below lower limit, 3 reserved),
///                            5 improper measurement position, 6-15 reserved
/// ```
public struct BloodPressureMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.bloodPressureMeasurement
    public static let name = "blood-pressure-measurement"

    public var units: PressureUnits
    public var systolic: SFloat
    public var diastolic: SFloat
    /// Mean arterial pressure.
    public var meanArterialPressure: SFloat
    public var timeStamp: DateTime?
    /// Pulse rate in beats per minute.
    public var pulseRate: SFloat?
    public var userID: UInt8?
    public var status: BloodPressureStatus?
    /// Flag bits 5-7, reserved.
    public var reservedFlags: UInt8

    public init(
        units: PressureUnits = .mmHg, systolic: SFloat, diastolic: SFloat, meanArterialPressure: SFloat,
        timeStamp: DateTime? = nil, pulseRate: SFloat? = nil, userID: UInt8? = nil,
        status: BloodPressureStatus? = nil, reservedFlags: UInt8 = 0
    ) {
        self.units = units
        self.systolic = systolic
        self.diastolic = diastolic
        self.meanArterialPressure = meanArterialPressure
        self.timeStamp = timeStamp
        self.pulseRate = pulseRate
        self.userID = userID
        self.status = status
        self.reservedFlags = reservedFlags & 0xE0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        let wire = try ByteReader.read(bytes) { (reader) throws(DecodeError) in
            try BloodPressureWire(reading: &reader, first: "systolic")
        }
        self.init(
            units: wire.units, systolic: wire.first, diastolic: wire.diastolic,
            meanArterialPressure: wire.meanArterialPressure, timeStamp: wire.timeStamp, pulseRate: wire.pulseRate,
            userID: wire.userID, status: wire.status, reservedFlags: wire.reservedFlags)
    }

    var wire: BloodPressureWire {
        BloodPressureWire(
            units: units, first: systolic, diastolic: diastolic, meanArterialPressure: meanArterialPressure,
            timeStamp: timeStamp, pulseRate: pulseRate, userID: userID, status: status, reservedFlags: reservedFlags)
    }

    public var flags: UInt8 { wire.flags }
    public func encoded() -> [UInt8] { wire.encoded() }

    /// A pressure in mmHg (kPa converted at 1 kPa = 760/101.325 mmHg); `nil` for a special value.
    public func millimetersOfMercury(_ pressure: SFloat) -> Double? { units.millimetersOfMercury(pressure) }

    public var fields: [Field] { wire.fields(first: "systolic") }
}

/// Intermediate Cuff Pressure (0x2A36): the cuff pressure while a measurement runs, in the layout of
/// ``BloodPressureMeasurement`` with the systolic field holding the current cuff pressure. Not a result: the
/// gateway does not store it.
public struct IntermediateCuffPressure: CharacteristicValue {
    public static let uuid = BluetoothUUID.intermediateCuffPressure
    public static let name = "intermediate-cuff-pressure"

    public var units: PressureUnits
    public var cuffPressure: SFloat
    /// Unused by the specification (NaN), kept as sent.
    public var diastolic: SFloat
    /// Unused by the specification (NaN), kept as sent.
    public var meanArterialPressure: SFloat
    public var timeStamp: DateTime?
    public var pulseRate: SFloat?
    public var userID: UInt8?
    public var status: BloodPressureStatus?
    public var reservedFlags: UInt8

    public init(
        units: PressureUnits = .mmHg, cuffPressure: SFloat, diastolic: SFloat = .nan,
        meanArterialPressure: SFloat = .nan, timeStamp: DateTime? = nil, pulseRate: SFloat? = nil,
        userID: UInt8? = nil, status: BloodPressureStatus? = nil, reservedFlags: UInt8 = 0
    ) {
        self.units = units
        self.cuffPressure = cuffPressure
        self.diastolic = diastolic
        self.meanArterialPressure = meanArterialPressure
        self.timeStamp = timeStamp
        self.pulseRate = pulseRate
        self.userID = userID
        self.status = status
        self.reservedFlags = reservedFlags & 0xE0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        let wire = try ByteReader.read(bytes) { (reader) throws(DecodeError) in
            try BloodPressureWire(reading: &reader, first: "cuff_pressure")
        }
        self.init(
            units: wire.units, cuffPressure: wire.first, diastolic: wire.diastolic,
            meanArterialPressure: wire.meanArterialPressure, timeStamp: wire.timeStamp, pulseRate: wire.pulseRate,
            userID: wire.userID, status: wire.status, reservedFlags: wire.reservedFlags)
    }

    var wire: BloodPressureWire {
        BloodPressureWire(
            units: units, first: cuffPressure, diastolic: diastolic, meanArterialPressure: meanArterialPressure,
            timeStamp: timeStamp, pulseRate: pulseRate, userID: userID, status: status, reservedFlags: reservedFlags)
    }

    public var flags: UInt8 { wire.flags }
    public func encoded() -> [UInt8] { wire.encoded() }
    public var fields: [Field] { wire.fields(first: "cuff_pressure") }
}

/// The unit of the three pressures (flags bit 0).
public enum PressureUnits: String, Sendable, Equatable {
    case mmHg
    case kPa

    /// mmHg per kPa: a standard atmosphere is 101.325 kPa and 760 mmHg.
    public static let millimetersOfMercuryPerKilopascal = 760 / 101.325

    public func millimetersOfMercury(_ pressure: SFloat) -> Double? {
        guard let value = pressure.value else { return nil }
        return self == .mmHg ? value : value * Self.millimetersOfMercuryPerKilopascal
    }
}

/// The Measurement Status bits of a blood pressure measurement.
public struct BloodPressureStatus: Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// What bits 3-4 say about the pulse rate.
    public enum PulseRateRange: UInt8, Sendable {
        case withinRange = 0, aboveUpperLimit = 1, belowLowerLimit = 2, reserved = 3

        public var name: String {
            switch self {
            case .withinRange: "within_range"
            case .aboveUpperLimit: "above_upper_limit"
            case .belowLowerLimit: "below_lower_limit"
            case .reserved: "reserved"
            }
        }
    }

    public var bodyMovementDetected: Bool { rawValue & 0x01 != 0 }
    public var cuffTooLoose: Bool { rawValue & 0x02 != 0 }
    public var irregularPulseDetected: Bool { rawValue & 0x04 != 0 }
    public var pulseRateRange: PulseRateRange { PulseRateRange(rawValue: UInt8((rawValue >> 3) & 0b11)) ?? .reserved }
    public var improperMeasurementPosition: Bool { rawValue & 0x20 != 0 }
    /// Bits 6-15, reserved.
    public var reservedBits: UInt16 { rawValue & 0xFFC0 }

    var fieldValue: FieldValue {
        .object([
            Field("value", .int(rawValue)),
            Field("body_movement_detected", .bool(bodyMovementDetected)),
            Field("cuff_too_loose", .bool(cuffTooLoose)),
            Field("irregular_pulse_detected", .bool(irregularPulseDetected)),
            Field("pulse_rate_range", .string(pulseRateRange.name)),
            Field("improper_measurement_position", .bool(improperMeasurementPosition)),
            Field("reserved_bits", .int(reservedBits)),
        ])
    }
}

/// The shared layout of 0x2A35 and 0x2A36.
struct BloodPressureWire {
    var units: PressureUnits
    var first: SFloat
    var diastolic: SFloat
    var meanArterialPressure: SFloat
    var timeStamp: DateTime?
    var pulseRate: SFloat?
    var userID: UInt8?
    var status: BloodPressureStatus?
    var reservedFlags: UInt8

    init(
        units: PressureUnits, first: SFloat, diastolic: SFloat, meanArterialPressure: SFloat, timeStamp: DateTime?,
        pulseRate: SFloat?, userID: UInt8?, status: BloodPressureStatus?, reservedFlags: UInt8
    ) {
        self.units = units
        self.first = first
        self.diastolic = diastolic
        self.meanArterialPressure = meanArterialPressure
        self.timeStamp = timeStamp
        self.pulseRate = pulseRate
        self.userID = userID
        self.status = status
        self.reservedFlags = reservedFlags
    }

    init(reading reader: inout ByteReader, first field: StaticString) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        units = flags & 0x01 == 0 ? .mmHg : .kPa
        first = try SFloat.read(&reader, field)
        diastolic = try SFloat.read(&reader, "diastolic")
        meanArterialPressure = try SFloat.read(&reader, "mean_arterial_pressure")
        timeStamp = flags & 0x02 == 0 ? nil : try DateTime(reading: &reader)
        pulseRate = flags & 0x04 == 0 ? nil : try SFloat.read(&reader, "pulse_rate")
        userID = flags & 0x08 == 0 ? nil : try reader.readUInt8("user_id")
        status = flags & 0x10 == 0 ? nil : BloodPressureStatus(rawValue: try reader.readUInt16("measurement_status"))
        reservedFlags = flags & 0xE0
    }

    var flags: UInt8 {
        var flags = reservedFlags & 0xE0
        if units == .kPa { flags |= 0x01 }
        if timeStamp != nil { flags |= 0x02 }
        if pulseRate != nil { flags |= 0x04 }
        if userID != nil { flags |= 0x08 }
        if status != nil { flags |= 0x10 }
        return flags
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.write(flags)
        first.write(to: &writer)
        diastolic.write(to: &writer)
        meanArterialPressure.write(to: &writer)
        timeStamp?.write(to: &writer)
        pulseRate?.write(to: &writer)
        if let userID { writer.write(userID) }
        if let status { writer.write(status.rawValue) }
        return writer.bytes
    }

    func fields(first name: String) -> [Field] {
        let unit = units.rawValue
        return [
            Field("flags", .int(flags)),
            Field("units", .string(unit)),
            Field(name, first.fieldValue, unit: unit),
            Field("diastolic", diastolic.fieldValue, unit: unit),
            Field("mean_arterial_pressure", meanArterialPressure.fieldValue, unit: unit),
            Field("time_stamp", DateTime.fieldValue(timeStamp)),
            Field("pulse_rate", pulseRate?.fieldValue ?? .null, unit: "count/min"),
            Field("user_id", .optional(userID)),
            Field("measurement_status", status?.fieldValue ?? .null),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// Blood Pressure Feature (0x2A49): which status bits the cuff can detect. 16 bits, read once.
///
/// ```
/// bit 0 body movement detection, 1 cuff fit detection, 2 irregular pulse detection,
/// 3 pulse rate range detection, 4 measurement position detection, 5 multiple bonds, 6-15 reserved
/// ```
public struct BloodPressureFeature: CharacteristicValue, OptionSet, Hashable {
    public static let uuid = BluetoothUUID.bloodPressureFeature
    public static let name = "blood-pressure-feature"

    public static let bodyMovementDetection = BloodPressureFeature(rawValue: 1 << 0)
    public static let cuffFitDetection = BloodPressureFeature(rawValue: 1 << 1)
    public static let irregularPulseDetection = BloodPressureFeature(rawValue: 1 << 2)
    public static let pulseRateRangeDetection = BloodPressureFeature(rawValue: 1 << 3)
    public static let measurementPositionDetection = BloodPressureFeature(rawValue: 1 << 4)
    public static let multipleBonds = BloodPressureFeature(rawValue: 1 << 5)

    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeFeatureBits(bytes)
    }

    public func encoded() -> [UInt8] { encodeFeatureBits(rawValue) }

    public var fields: [Field] {
        [
            Field("value", .int(rawValue)),
            Field("body_movement_detection_supported", .bool(contains(.bodyMovementDetection))),
            Field("cuff_fit_detection_supported", .bool(contains(.cuffFitDetection))),
            Field("irregular_pulse_detection_supported", .bool(contains(.irregularPulseDetection))),
            Field("pulse_rate_range_detection_supported", .bool(contains(.pulseRateRangeDetection))),
            Field("measurement_position_detection_supported", .bool(contains(.measurementPositionDetection))),
            Field("multiple_bonds_supported", .bool(contains(.multipleBonds))),
            Field("reserved_bits", .int(rawValue & 0xFFC0)),
        ]
    }
}
