/// Weight Measurement (0x2A9D), indicated by a bathroom scale (Weight Scale service 0x181D).
///
/// ```
/// offset  size  field
/// 0       1     flags        bit0 imperial (else SI), bit1 time stamp, bit2 user ID, bit3 BMI and height, 4-7 reserved
/// 1       2     weight       uint16: 0.005 kg (SI) or 0.01 lb (imperial); 0xFFFF = measurement unsuccessful
/// +       0|7   time stamp   Date Time, the scale's local time, when bit1
/// +       0|1   user ID      uint8, 255 = unknown user, when bit2
/// +       0|2   BMI          uint16, 0.1 kg/m², when bit3
/// +       0|2   height       uint16: 0.001 m (SI) or 0.1 in (imperial), when bit3
/// ```
///
/// One flag covers both BMI and height: a value with bit 3 and only the BMI is truncated. Scales store
/// readings while nobody is connected and indicate them later, each with its own time stamp.
public struct WeightMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.weightMeasurement
    public static let name = "weight-measurement"

    /// The raw weight of a failed measurement.
    public static let unsuccessful: UInt16 = 0xFFFF

    public var units: MeasurementUnits
    /// Weight in 0.005 kg (SI) or 0.01 lb (imperial); ``unsuccessful`` when the scale could not measure.
    public var weight: UInt16
    public var timeStamp: DateTime?
    /// The scale's user index; 255 is an unknown user.
    public var userID: UInt8?
    /// BMI in 0.1 kg/m², sent together with ``height``.
    public var bmi: UInt16?
    /// Height in 0.001 m (SI) or 0.1 in (imperial), sent together with ``bmi``.
    public var height: UInt16?
    /// Flag bits 4-7, reserved.
    public var reservedFlags: UInt8

    /// `bmi` and `height` come as a pair (one flag): give both or neither; a lone one is dropped.
    public init(
        units: MeasurementUnits = .si, weight: UInt16, timeStamp: DateTime? = nil, userID: UInt8? = nil,
        bmi: UInt16? = nil, height: UInt16? = nil, reservedFlags: UInt8 = 0
    ) {
        self.units = units
        self.weight = weight
        self.timeStamp = timeStamp
        self.userID = userID
        let pair = bmi != nil && height != nil
        self.bmi = pair ? bmi : nil
        self.height = pair ? height : nil
        self.reservedFlags = reservedFlags & 0xF0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        units = MeasurementUnits(bit: flags & 0x01 != 0)
        weight = try reader.readUInt16("weight")
        timeStamp = flags & 0x02 == 0 ? nil : try DateTime(reading: &reader)
        userID = flags & 0x04 == 0 ? nil : try reader.readUInt8("user_id")
        if flags & 0x08 != 0 {
            bmi = try reader.readUInt16("bmi")
            height = try reader.readUInt16("height")
        } else {
            bmi = nil
            height = nil
        }
        reservedFlags = flags & 0xF0
    }

    public var flags: UInt8 {
        var flags = reservedFlags & 0xF0
        if units.bit { flags |= 0x01 }
        if timeStamp != nil { flags |= 0x02 }
        if userID != nil { flags |= 0x04 }
        if bmi != nil, height != nil { flags |= 0x08 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 15)
        writer.write(flags)
        writer.write(weight)
        timeStamp?.write(to: &writer)
        if let userID { writer.write(userID) }
        if let bmi, let height {
            writer.write(bmi)
            writer.write(height)
        }
        return writer.bytes
    }

    /// Whether the scale reported a failed measurement (weight 0xFFFF).
    public var isUnsuccessful: Bool { weight == Self.unsuccessful }

    /// The weight in kilograms (pounds converted at 0.45359237 kg/lb); `nil` for an unsuccessful measurement.
    public var kilograms: Double? {
        isUnsuccessful ? nil : massKilograms(weight, units)
    }

    /// The weight in the unit sent (kg or lb).
    public var weightInSentUnit: Double? {
        isUnsuccessful ? nil : massInSentUnit(weight, units)
    }

    /// BMI in kg/m².
    public var bodyMassIndex: Double? { bmi.map { Double($0) / 10 } }

    /// Height in metres (inches converted at 0.0254 m/in).
    public var meters: Double? { height.map { heightMeters($0, units) } }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("units", .string(units.rawValue)),
            Field("weight", .optional(weightInSentUnit), unit: massUnit(units)),
            Field("weight_kg", .optional(kilograms), unit: "kg"),
            Field("measurement_unsuccessful", .bool(isUnsuccessful)),
            Field("time_stamp", DateTime.fieldValue(timeStamp)),
            Field("user_id", .optional(userID)),
            Field("bmi", .optional(bodyMassIndex), unit: "count"),
            Field("height", .optional(height.map { heightInSentUnit($0, units) }), unit: lengthUnit(units)),
            Field("height_m", .optional(meters), unit: "m"),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// Weight Scale Feature (0x2A9E): what the scale supports and its resolutions. 32 bits, read once.
///
/// ```
/// bit 0 time stamp supported, 1 multiple users supported, 2 BMI supported,
/// bits 3-6 weight resolution (0 not specified, 1 0.5 kg / 1 lb, 2 0.2 kg / 0.5 lb, 3 0.1 kg / 0.2 lb,
///   4 0.05 kg / 0.1 lb, 5 0.02 kg / 0.05 lb, 6 0.01 kg / 0.02 lb, 7 0.005 kg / 0.01 lb, 8-15 reserved),
/// bits 7-9 height resolution (0 not specified, 1 0.01 m / 1 in, 2 0.005 m / 0.5 in, 3 0.001 m / 0.1 in,
///   4-7 reserved), bits 10-31 reserved
/// ```
public struct WeightScaleFeature: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.weightScaleFeature
    public static let name = "weight-scale-feature"

    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, 4)
        rawValue = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try reader.readUInt32("feature") }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.write(rawValue)
        return writer.bytes
    }

    public var timeStampSupported: Bool { rawValue & 0x01 != 0 }
    public var multipleUsersSupported: Bool { rawValue & 0x02 != 0 }
    public var bmiSupported: Bool { rawValue & 0x04 != 0 }
    /// The weight resolution code, bits 3-6.
    public var weightResolution: UInt8 { UInt8((rawValue >> 3) & 0x0F) }
    /// The height resolution code, bits 7-9.
    public var heightResolution: UInt8 { UInt8((rawValue >> 7) & 0x07) }

    public var fields: [Field] {
        [
            Field("value", .int(rawValue)),
            Field("time_stamp_supported", .bool(timeStampSupported)),
            Field("multiple_users_supported", .bool(multipleUsersSupported)),
            Field("bmi_supported", .bool(bmiSupported)),
            Field("weight_resolution", .string(massResolutionName(weightResolution))),
            Field("height_resolution", .string(heightResolutionName(heightResolution))),
            Field("reserved_bits", .int(rawValue & 0xFFFF_FC00)),
        ]
    }
}

// MARK: - Units shared with Body Composition

/// Pounds to kilograms, exactly (the international pound).
let kilogramsPerPound = 0.45359237
/// Inches to metres, exactly.
let metersPerInch = 0.0254

/// A mass field (weight, muscle mass, ...) in kilograms: 0.005 kg or 0.01 lb per step.
func massKilograms(_ raw: UInt16, _ units: MeasurementUnits) -> Double {
    switch units {
    case .si: Double(raw) * 5 / 1000
    case .imperial: Double(raw) / 100 * kilogramsPerPound
    }
}

func massInSentUnit(_ raw: UInt16, _ units: MeasurementUnits) -> Double {
    units == .si ? Double(raw) * 5 / 1000 : Double(raw) / 100
}

func massUnit(_ units: MeasurementUnits) -> String { units == .si ? "kg" : "lb" }

/// A height field in metres: 0.001 m or 0.1 in per step.
func heightMeters(_ raw: UInt16, _ units: MeasurementUnits) -> Double {
    switch units {
    case .si: Double(raw) / 1000
    case .imperial: Double(raw) / 10 * metersPerInch
    }
}

func heightInSentUnit(_ raw: UInt16, _ units: MeasurementUnits) -> Double {
    units == .si ? Double(raw) / 1000 : Double(raw) / 10
}

func lengthUnit(_ units: MeasurementUnits) -> String { units == .si ? "m" : "in" }

func massResolutionName(_ code: UInt8) -> String {
    let names = [
        "not_specified", "0.5 kg or 1 lb", "0.2 kg or 0.5 lb", "0.1 kg or 0.2 lb", "0.05 kg or 0.1 lb",
        "0.02 kg or 0.05 lb", "0.01 kg or 0.02 lb", "0.005 kg or 0.01 lb",
    ]
    return enumerationName(code, in: names)
}

func heightResolutionName(_ code: UInt8) -> String {
    enumerationName(code, in: ["not_specified", "0.01 m or 1 in", "0.005 m or 0.5 in", "0.001 m or 0.1 in"])
}
