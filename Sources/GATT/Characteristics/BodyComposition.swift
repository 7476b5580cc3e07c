/// Body Composition Measurement (0x2A9C), indicated by a body composition analyser (a scale with electrodes;
/// Body Composition service 0x181B).
///
/// ```
/// offset  size  field
/// 0       2     flags              bit0 imperial, 1 time stamp, 2 user ID, 3 basal metabolism, 4 muscle %,
///                                  5 muscle mass, 6 fat free mass, 7 soft lean mass, 8 body water mass,
///                                  9 impedance, 10 weight, 11 height, 12 multiple packet, 13-15 reserved
/// 2       2     body fat           uint16, 0.1 %; 0xFFFF = measurement unsuccessful
/// +       0|7   time stamp         Date Time
/// +       0|1   user ID            uint8, 255 = unknown user
/// +       0|2   basal metabolism   uint16, kJ
/// +       0|2   muscle percentage  uint16, 0.1 %
/// +       0|2   muscle mass        uint16, 0.005 kg or 0.01 lb
/// +       0|2   fat free mass      the same
/// +       0|2   soft lean mass     the same
/// +       0|2   body water mass    the same
/// +       0|2   impedance          uint16, 0.1 ohm
/// +       0|2   weight             uint16, 0.005 kg or 0.01 lb
/// +       0|2   height             uint16, 0.001 m or 0.1 in
/// ```
///
/// A full value is longer than a default-MTU indication, so a sensor may split it: the first packet sets the
/// multiple-packet bit and each packet carries its own flags, body fat and a subset of the fields. Each packet
/// decodes on its own; the bit is kept (``isMultiplePacket``).
public struct BodyCompositionMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.bodyCompositionMeasurement
    public static let name = "body-composition-measurement"

    public static let unsuccessful: UInt16 = 0xFFFF

    public var units: MeasurementUnits
    /// Body fat in 0.1 %; ``unsuccessful`` when the analyser could not measure.
    public var bodyFat: UInt16
    public var timeStamp: DateTime?
    public var userID: UInt8?
    /// Basal metabolism in kJ (per day).
    public var basalMetabolism: UInt16?
    /// Muscle percentage in 0.1 %.
    public var musclePercentage: UInt16?
    /// Masses in 0.005 kg (SI) or 0.01 lb (imperial).
    public var muscleMass: UInt16?
    public var fatFreeMass: UInt16?
    public var softLeanMass: UInt16?
    public var bodyWaterMass: UInt16?
    /// Impedance in 0.1 ohm.
    public var impedance: UInt16?
    /// Weight in 0.005 kg or 0.01 lb.
    public var weight: UInt16?
    /// Height in 0.001 m or 0.1 in.
    public var height: UInt16?
    /// Flags bit 12: this packet is one of several that together make the measurement.
    public var isMultiplePacket: Bool
    /// Flag bits 13-15, reserved.
    public var reservedFlags: UInt16

    public init(
        units: MeasurementUnits = .si, bodyFat: UInt16, timeStamp: DateTime? = nil, userID: UInt8? = nil,
        basalMetabolism: UInt16? = nil, musclePercentage: UInt16? = nil, muscleMass: UInt16? = nil,
        fatFreeMass: UInt16? = nil, softLeanMass: UInt16? = nil, bodyWaterMass: UInt16? = nil,
        impedance: UInt16? = nil, weight: UInt16? = nil, height: UInt16? = nil, isMultiplePacket: Bool = false,
        reservedFlags: UInt16 = 0
    ) {
        self.units = units
        self.bodyFat = bodyFat
        self.timeStamp = timeStamp
        self.userID = userID
        self.basalMetabolism = basalMetabolism
        self.musclePercentage = musclePercentage
        self.muscleMass = muscleMass
        self.fatFreeMass = fatFreeMass
        self.softLeanMass = softLeanMass
        self.bodyWaterMass = bodyWaterMass
        self.impedance = impedance
        self.weight = weight
        self.height = height
        self.isMultiplePacket = isMultiplePacket
        self.reservedFlags = reservedFlags & 0xE000
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt16("flags")
        func optional(_ bit: UInt16, _ field: StaticString) throws(DecodeError) -> UInt16? {
            flags & bit == 0 ? nil : try reader.readUInt16(field)
        }
        units = MeasurementUnits(bit: flags & 0x0001 != 0)
        bodyFat = try reader.readUInt16("body_fat_percentage")
        timeStamp = flags & 0x0002 == 0 ? nil : try DateTime(reading: &reader)
        userID = flags & 0x0004 == 0 ? nil : try reader.readUInt8("user_id")
        basalMetabolism = try optional(0x0008, "basal_metabolism")
        musclePercentage = try optional(0x0010, "muscle_percentage")
        muscleMass = try optional(0x0020, "muscle_mass")
        fatFreeMass = try optional(0x0040, "fat_free_mass")
        softLeanMass = try optional(0x0080, "soft_lean_mass")
        bodyWaterMass = try optional(0x0100, "body_water_mass")
        impedance = try optional(0x0200, "impedance")
        weight = try optional(0x0400, "weight")
        height = try optional(0x0800, "height")
        isMultiplePacket = flags & 0x1000 != 0
        reservedFlags = flags & 0xE000
    }

    public var flags: UInt16 {
        var flags = reservedFlags & 0xE000
        if units.bit { flags |= 0x0001 }
        if timeStamp != nil { flags |= 0x0002 }
        if userID != nil { flags |= 0x0004 }
        let optionals: [(UInt16?, UInt16)] = [
            (basalMetabolism, 0x0008), (musclePercentage, 0x0010), (muscleMass, 0x0020), (fatFreeMass, 0x0040),
            (softLeanMass, 0x0080), (bodyWaterMass, 0x0100), (impedance, 0x0200), (weight, 0x0400),
            (height, 0x0800),
        ]
        for (value, bit) in optionals where value != nil { flags |= bit }
        if isMultiplePacket { flags |= 0x1000 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 30)
        writer.write(flags)
        writer.write(bodyFat)
        timeStamp?.write(to: &writer)
        if let userID { writer.write(userID) }
        for value in [
            basalMetabolism, musclePercentage, muscleMass, fatFreeMass, softLeanMass, bodyWaterMass, impedance,
            weight, height,
        ] {
            if let value { writer.write(value) }
        }
        return writer.bytes
    }

    public var isUnsuccessful: Bool { bodyFat == Self.unsuccessful }

    /// Body fat as a fraction 0...1 (HealthKit's `bodyFatPercentage` unit); `nil` when unsuccessful.
    public var bodyFatFraction: Double? { isUnsuccessful ? nil : Double(bodyFat) / 1000 }

    /// The masses in kilograms.
    public var muscleMassKilograms: Double? { muscleMass.map { massKilograms($0, units) } }
    public var fatFreeMassKilograms: Double? { fatFreeMass.map { massKilograms($0, units) } }
    public var softLeanMassKilograms: Double? { softLeanMass.map { massKilograms($0, units) } }
    public var bodyWaterMassKilograms: Double? { bodyWaterMass.map { massKilograms($0, units) } }
    public var weightKilograms: Double? { weight.map { massKilograms($0, units) } }
    /// Height in metres.
    public var heightMeters: Double? { height.map { GATT.heightMeters($0, units) } }

    public var fields: [Field] {
        let mass = massUnit(units)
        func inSent(_ raw: UInt16?) -> FieldValue { .optional(raw.map { massInSentUnit($0, units) }) }
        return [
            Field("flags", .int(flags)),
            Field("units", .string(units.rawValue)),
            Field("body_fat_percentage", .optional(isUnsuccessful ? nil : Double(bodyFat) / 10), unit: "%"),
            Field("measurement_unsuccessful", .bool(isUnsuccessful)),
            Field("time_stamp", DateTime.fieldValue(timeStamp)),
            Field("user_id", .optional(userID)),
            Field("basal_metabolism", .optional(basalMetabolism), unit: "kJ"),
            Field("muscle_percentage", .optional(musclePercentage.map { Double($0) / 10 }), unit: "%"),
            Field("muscle_mass", inSent(muscleMass), unit: mass),
            Field("fat_free_mass", inSent(fatFreeMass), unit: mass),
            Field("soft_lean_mass", inSent(softLeanMass), unit: mass),
            Field("body_water_mass", inSent(bodyWaterMass), unit: mass),
            Field("impedance", .optional(impedance.map { Double($0) / 10 }), unit: "ohm"),
            Field("weight", inSent(weight), unit: mass),
            Field("height", .optional(height.map { heightInSentUnit($0, units) }), unit: lengthUnit(units)),
            Field("multiple_packet", .bool(isMultiplePacket)),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// Body Composition Feature (0x2A9B): the optional fields the analyser supports and its resolutions. 32 bits.
///
/// ```
/// bit 0 time stamp, 1 multiple users, 2 basal metabolism, 3 muscle percentage, 4 muscle mass, 5 fat free mass,
/// 6 soft lean mass, 7 body water mass, 8 impedance, 9 weight, 10 height (each "supported"),
/// bits 11-14 mass resolution (the codes of Weight Scale Feature), bits 15-17 height resolution, 18-31 reserved
/// ```
public struct BodyCompositionFeature: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.bodyCompositionFeature
    public static let name = "body-composition-feature"

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

    static let bitNames = [
        "time_stamp_supported", "multiple_users_supported", "basal_metabolism_supported",
        "muscle_percentage_supported", "muscle_mass_supported", "fat_free_mass_supported",
        "soft_lean_mass_supported", "body_water_mass_supported", "impedance_supported", "weight_supported",
        "height_supported",
    ]

    public var multipleUsersSupported: Bool { rawValue & 0x02 != 0 }
    public var massResolution: UInt8 { UInt8((rawValue >> 11) & 0x0F) }
    public var heightResolution: UInt8 { UInt8((rawValue >> 15) & 0x07) }

    public var fields: [Field] {
        var fields = [Field("value", .int(rawValue))]
        for (bit, name) in Self.bitNames.enumerated() { fields.append(Field(name, .bool(rawValue >> bit & 1 != 0))) }
        fields.append(Field("mass_resolution", .string(massResolutionName(massResolution))))
        fields.append(Field("height_resolution", .string(heightResolutionName(heightResolution))))
        fields.append(Field("reserved_bits", .int(rawValue & 0xFFFC_0000)))
        return fields
    }
}
