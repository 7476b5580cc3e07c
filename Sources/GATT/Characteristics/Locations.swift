/// Body Sensor Location (0x2A38): where a heart-rate sensor is worn. One byte, read once per connection.
///
/// Values 7-255 are reserved; they decode (``isReserved``) rather than fail, because a metadata tag should
/// never cost a sensor its data (``DecodingPolicy/reservedEnumerationValues``). HealthKit's
/// `HKHeartRateSensorLocation` mirrors values 0-6 one to one.
public struct BodySensorLocation: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.bodySensorLocation
    public static let name = "body-sensor-location"

    public static let other = BodySensorLocation(rawValue: 0)
    public static let chest = BodySensorLocation(rawValue: 1)
    public static let wrist = BodySensorLocation(rawValue: 2)
    public static let finger = BodySensorLocation(rawValue: 3)
    public static let hand = BodySensorLocation(rawValue: 4)
    public static let earLobe = BodySensorLocation(rawValue: 5)
    public static let foot = BodySensorLocation(rawValue: 6)

    static let names = ["other", "chest", "wrist", "finger", "hand", "ear_lobe", "foot"]

    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Parses a name such as `chest` or `ear-lobe`, or a number.
    public init?(name: String) {
        guard let raw = enumerationValue(named: name, in: Self.names) else { return nil }
        rawValue = raw
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeSingleByte(bytes)
    }

    /// `chest`, `ear_lobe`, ... or `reserved`.
    public var name: String { enumerationName(rawValue, in: Self.names) }
    public var isReserved: Bool { Int(rawValue) >= Self.names.count }
    public func encoded() -> [UInt8] { [rawValue] }
    public var fields: [Field] { [Field("value", .int(rawValue)), Field("name", .string(name))] }
}

/// Sensor Location (0x2A5D), shared by Running and Cycling Speed and Cadence and Cycling Power.
///
/// A different table from ``BodySensorLocation``: "chest" is 14 here and 1 there. Values 17-255 are reserved.
public struct SensorLocation: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.sensorLocation
    public static let name = "sensor-location"

    public static let other = SensorLocation(rawValue: 0)
    public static let topOfShoe = SensorLocation(rawValue: 1)
    public static let inShoe = SensorLocation(rawValue: 2)
    public static let hip = SensorLocation(rawValue: 3)
    public static let chest = SensorLocation(rawValue: 14)

    static let names = [
        "other", "top_of_shoe", "in_shoe", "hip", "front_wheel", "left_crank", "right_crank", "left_pedal",
        "right_pedal", "front_hub", "rear_dropout", "chainstay", "rear_wheel", "rear_hub", "chest", "spider",
        "chain_ring",
    ]

    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Parses a name such as `top-of-shoe` or `in_shoe`, or a number.
    public init?(name: String) {
        guard let raw = enumerationValue(named: name, in: Self.names) else { return nil }
        rawValue = raw
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        rawValue = try decodeSingleByte(bytes)
    }

    public var name: String { enumerationName(rawValue, in: Self.names) }
    public var isReserved: Bool { Int(rawValue) >= Self.names.count }
    public func encoded() -> [UInt8] { [rawValue] }
    public var fields: [Field] { [Field("value", .int(rawValue)), Field("name", .string(name))] }
}

/// Battery Level (0x2A19): percent, 0 = empty, 100 = full; 101-255 are reserved and rejected as out of range.
public struct BatteryLevel: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.batteryLevel
    public static let name = "battery-level"

    /// Percent, 0...100.
    public var percent: UInt8

    public init?(percent: UInt8) {
        guard percent <= 100 else { return nil }
        self.percent = percent
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        let value = try decodeSingleByte(bytes)
        guard value <= 100 else { throw .outOfRange(field: "battery_level", offset: 0, value: Int(value)) }
        percent = value
    }

    public func encoded() -> [UInt8] { [percent] }
    public var fields: [Field] {
        [Field("value", .int(percent), unit: "%"), Field("battery_level", .int(percent), unit: "%")]
    }
}

/// Heart Rate Control Point (0x2A39), written by the client. Only 0x01, Reset Energy Expended, is defined.
///
/// Write it only to a sensor that sends Energy Expended: Huami bands use 0x2A39 as a vendor command channel.
public struct HeartRateControlPoint: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.heartRateControlPoint
    public static let name = "heart-rate-control-point"

    /// The one defined command: reset the Energy Expended counter to 0.
    public static let resetEnergyExpended = HeartRateControlPoint(opCode: 0x01)

    public var opCode: UInt8
    public init(opCode: UInt8) { self.opCode = opCode }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        opCode = try decodeSingleByte(bytes)
    }

    public var name: String { opCode == 0x01 ? "reset_energy_expended" : "reserved" }
    public func encoded() -> [UInt8] { [opCode] }
    public var fields: [Field] { [Field("op_code", .int(opCode)), Field("name", .string(name))] }
}

/// InfiniTime (PineTime) Motion Service step count, `00030001-78fc-48fe-8e23-433b3a1942d0`: uint32 LE steps
/// since midnight on the watch, read + notify. The first vendor step profile.
public struct InfiniTimeStepCount: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.infiniTimeStepCount
    public static let name = "infinitime-step-count"

    public var steps: UInt32
    public init(steps: UInt32) { self.steps = steps }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, 4)
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        steps = try reader.readUInt32("steps")
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.write(steps)
        return writer.bytes
    }

    public var fields: [Field] {
        [Field("value", .int(steps), unit: "count"), Field("steps", .int(steps), unit: "count")]
    }
}

/// Fixed-size characteristics: exactly `count` bytes, or ``DecodeError/invalidLength(expected:actual:)``.
func requireLength(_ bytes: [UInt8], _ count: Int) throws(DecodeError) {
    guard bytes.count == count else { throw .invalidLength(expected: count, actual: bytes.count) }
}

func decodeSingleByte(_ bytes: [UInt8]) throws(DecodeError) -> UInt8 {
    try requireLength(bytes, 1)
    return try ByteReader.read(bytes) { (reader) throws(DecodeError) in try reader.readUInt8("value") }
}

func enumerationName(_ raw: UInt8, in names: [String]) -> String {
    Int(raw) < names.count ? names[Int(raw)] : "reserved"
}

func enumerationValue(named text: String, in names: [String]) -> UInt8? {
    if let number = UInt8(text) { return number }
    let wanted = String(text.lowercased().map { $0 == "-" || $0 == " " ? "_" : $0 })
    return names.firstIndex(of: wanted).map { UInt8($0) }
}
