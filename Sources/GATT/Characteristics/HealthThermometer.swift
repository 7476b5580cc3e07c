/// Temperature Measurement (0x2A1C, indicated) and Intermediate Temperature (0x2A1E, notified while the
/// reading settles) share one layout (Health Thermometer service 0x1809):
///
/// ```
/// offset  size  field
/// 0       1     flags              bit0 Fahrenheit (else Celsius), bit1 time stamp, bit2 temperature type,
///                                  3-7 reserved
/// 1       4     temperature        FLOAT (IEEE 11073 32-bit)
/// +       0|7   time stamp         Date Time
/// +       0|1   temperature type   uint8, as Temperature Type (0x2A1D)
/// ```
public struct TemperatureMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.temperatureMeasurement
    public static let name = "temperature-measurement"

    public var units: TemperatureUnits
    public var temperature: MedicalFloat
    public var timeStamp: DateTime?
    /// Where on the body it was taken, when the thermometer says so here (else see Temperature Type 0x2A1D).
    public var temperatureType: TemperatureType?
    /// Flag bits 3-7, reserved.
    public var reservedFlags: UInt8

    public init(
        units: TemperatureUnits = .celsius, temperature: MedicalFloat, timeStamp: DateTime? = nil,
        temperatureType: TemperatureType? = nil, reservedFlags: UInt8 = 0
    ) {
        self.units = units
        self.temperature = temperature
        self.timeStamp = timeStamp
        self.temperatureType = temperatureType
        self.reservedFlags = reservedFlags & 0xF8
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        let wire = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try TemperatureWire(reading: &reader) }
        self.init(
            units: wire.units, temperature: wire.temperature, timeStamp: wire.timeStamp,
            temperatureType: wire.temperatureType, reservedFlags: wire.reservedFlags)
    }

    var wire: TemperatureWire {
        TemperatureWire(
            units: units, temperature: temperature, timeStamp: timeStamp, temperatureType: temperatureType,
            reservedFlags: reservedFlags)
    }

    public var flags: UInt8 { wire.flags }
    public func encoded() -> [UInt8] { wire.encoded() }

    /// The temperature in degrees Celsius; `nil` for a special value.
    public var celsius: Double? { units.celsius(temperature) }

    public var fields: [Field] { wire.fields }
}

/// Intermediate Temperature (0x2A1E): readings while the thermometer settles, in the layout of
/// ``TemperatureMeasurement``. Not a result: the gateway does not store it.
public struct IntermediateTemperature: CharacteristicValue {
    public static let uuid = BluetoothUUID.intermediateTemperature
    public static let name = "intermediate-temperature"

    public var units: TemperatureUnits
    public var temperature: MedicalFloat
    public var timeStamp: DateTime?
    public var temperatureType: TemperatureType?
    public var reservedFlags: UInt8

    public init(
        units: TemperatureUnits = .celsius, temperature: MedicalFloat, timeStamp: DateTime? = nil,
        temperatureType: TemperatureType? = nil, reservedFlags: UInt8 = 0
    ) {
        self.units = units
        self.temperature = temperature
        self.timeStamp = timeStamp
        self.temperatureType = temperatureType
        self.reservedFlags = reservedFlags & 0xF8
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        let wire = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try TemperatureWire(reading: &reader) }
        self.init(
            units: wire.units, temperature: wire.temperature, timeStamp: wire.timeStamp,
            temperatureType: wire.temperatureType, reservedFlags: wire.reservedFlags)
    }

    var wire: TemperatureWire {
        TemperatureWire(
            units: units, temperature: temperature, timeStamp: timeStamp, temperatureType: temperatureType,
            reservedFlags: reservedFlags)
    }

    public var flags: UInt8 { wire.flags }
    public func encoded() -> [UInt8] { wire.encoded() }
    public var celsius: Double? { units.celsius(temperature) }
    public var fields: [Field] { wire.fields }
}

/// The temperature unit (flags bit 0).
public enum TemperatureUnits: String, Sendable, Equatable {
    case celsius
    case fahrenheit

    public func celsius(_ temperature: MedicalFloat) -> Double? {
        guard let value = temperature.value else { return nil }
        return self == .celsius ? value : (value - 32) * 5 / 9
    }

    var unit: String { self == .celsius ? "degC" : "degF" }
}

/// Temperature Type (0x2A1D, read; also the last field of a temperature measurement): where the temperature was
/// taken. 1 armpit, 2 body (general), 3 ear (usually the lobe), 4 finger, 5 gastro-intestinal tract, 6 mouth,
/// 7 rectum, 8 toe, 9 tympanum (ear drum); 0 and 10-255 are reserved and kept. HealthKit's
/// `HKBodyTemperatureSensorLocation` uses the same numbers 1-9.
public struct TemperatureType: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.temperatureType
    public static let name = "temperature-type"

    public static let armpit = TemperatureType(rawValue: 1)
    public static let body = TemperatureType(rawValue: 2)
    public static let ear = TemperatureType(rawValue: 3)
    public static let finger = TemperatureType(rawValue: 4)
    public static let gastrointestinalTract = TemperatureType(rawValue: 5)
    public static let mouth = TemperatureType(rawValue: 6)
    public static let rectum = TemperatureType(rawValue: 7)
    public static let toe = TemperatureType(rawValue: 8)
    public static let tympanum = TemperatureType(rawValue: 9)

    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeSingleByte(bytes)
    }

    public func encoded() -> [UInt8] { [rawValue] }

    static let names = [
        "reserved", "armpit", "body", "ear", "finger", "gastrointestinal_tract", "mouth", "rectum", "toe",
        "tympanum",
    ]

    /// The snake_case name, `reserved` for 0 and 10-255.
    public var locationName: String { enumerationName(rawValue, in: Self.names) }
    public var isReserved: Bool { rawValue == 0 || rawValue > 9 }

    public var fields: [Field] {
        [Field("value", .int(rawValue)), Field("temperature_type", .string(locationName))]
    }
}

/// Measurement Interval (0x2A21, read, optionally write and indicate): seconds between periodic measurements;
/// 0 means no periodic measurement.
public struct MeasurementInterval: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.measurementInterval
    public static let name = "measurement-interval"

    public var seconds: UInt16
    public init(seconds: UInt16) { self.seconds = seconds }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, 2)
        seconds = try ByteReader.read(bytes) { (reader) throws(DecodeError) in
            try reader.readUInt16("measurement_interval")
        }
    }

    public func encoded() -> [UInt8] { encodeFeatureBits(seconds) }

    public var fields: [Field] {
        [
            Field("measurement_interval", .int(seconds), unit: "s"),
            Field("periodic", .bool(seconds != 0)),
        ]
    }
}

struct TemperatureWire {
    var units: TemperatureUnits
    var temperature: MedicalFloat
    var timeStamp: DateTime?
    var temperatureType: TemperatureType?
    var reservedFlags: UInt8

    init(
        units: TemperatureUnits, temperature: MedicalFloat, timeStamp: DateTime?, temperatureType: TemperatureType?,
        reservedFlags: UInt8
    ) {
        self.units = units
        self.temperature = temperature
        self.timeStamp = timeStamp
        self.temperatureType = temperatureType
        self.reservedFlags = reservedFlags
    }

    init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        units = flags & 0x01 == 0 ? .celsius : .fahrenheit
        temperature = try MedicalFloat.read(&reader, "temperature")
        timeStamp = flags & 0x02 == 0 ? nil : try DateTime(reading: &reader)
        temperatureType = flags & 0x04 == 0 ? nil : TemperatureType(rawValue: try reader.readUInt8("temperature_type"))
        reservedFlags = flags & 0xF8
    }

    var flags: UInt8 {
        var flags = reservedFlags & 0xF8
        if units == .fahrenheit { flags |= 0x01 }
        if timeStamp != nil { flags |= 0x02 }
        if temperatureType != nil { flags |= 0x04 }
        return flags
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 13)
        writer.write(flags)
        temperature.write(to: &writer)
        timeStamp?.write(to: &writer)
        if let temperatureType { writer.write(temperatureType.rawValue) }
        return writer.bytes
    }

    var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("units", .string(units.rawValue)),
            Field("temperature", temperature.fieldValue, unit: units.unit),
            Field("temperature_celsius", .optional(units.celsius(temperature)), unit: "degC"),
            Field("time_stamp", DateTime.fieldValue(timeStamp)),
            Field("temperature_type", temperatureType.map { .string($0.locationName) } ?? .null),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}
