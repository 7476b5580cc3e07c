/// Current Time (0x2A2B, Current Time Service 0x1805): a device's clock, read or notified.
/// `docs/gatt-health-devices.md`.
///
/// ```
/// offset  size  field
/// 0       7     date time      the Date Time 0x2A08 layout (``DateTime``)
/// 7       1     day of week    0 unknown, 1-7 Monday to Sunday, 8-255 reserved
/// 8       1     fractions256   1/256 s after the second
/// 9       1     adjust reason  bit 0 manual time update, 1 external reference time update, 2 change of time
///                              zone, 3 change of DST; 4-7 reserved
/// ```
///
/// Date time, day of week and fractions together are "Exact Time 256" (Day Date Time plus Fractions256). The
/// value has exactly 10 bytes (``DecodingPolicy/trailingBytes``); every field is kept as sent
/// (``DecodingPolicy/currentTimeValues``). wearhouse only reads it: the gateway does not set a device's clock.
public struct CurrentTime: CharacteristicValue, Hashable {
    public static let uuid = BluetoothUUID.currentTime
    public static let name = "current-time"
    /// The size of the value on the wire.
    public static let size = 10

    public var dateTime: DateTime
    /// 0 = unknown, 1 = Monday ... 7 = Sunday; 8-255 are reserved and kept (``dayOfWeekName`` is `reserved`).
    public var dayOfWeek: UInt8
    /// Fractions of a second in 1/256 s.
    public var fractions256: UInt8
    public var adjustReason: AdjustReason

    public init(
        dateTime: DateTime, dayOfWeek: UInt8 = 0, fractions256: UInt8 = 0, adjustReason: AdjustReason = []
    ) {
        self.dateTime = dateTime
        self.dayOfWeek = dayOfWeek
        self.fractions256 = fractions256
        self.adjustReason = adjustReason
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, Self.size)
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in
            let dateTime = try DateTime(reading: &reader, field: "date_time")
            return CurrentTime(
                dateTime: dateTime, dayOfWeek: try reader.readUInt8("day_of_week"),
                fractions256: try reader.readUInt8("fractions256"),
                adjustReason: AdjustReason(rawValue: try reader.readUInt8("adjust_reason")))
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        dateTime.write(to: &writer)
        writer.write(dayOfWeek)
        writer.write(fractions256)
        writer.write(adjustReason.rawValue)
        return writer.bytes
    }

    static let dayNames = ["unknown", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// `unknown`, `monday` ... `sunday`, or `reserved` for 8-255.
    public var dayOfWeekName: String { enumerationName(dayOfWeek, in: Self.dayNames) }

    /// The fractions as seconds (`fractions256 / 256`).
    public var fractionSeconds: Double { Double(fractions256) / 256 }

    public var fields: [Field] {
        [
            Field("date_time", .string(dateTime.description)),
            Field("complete", .bool(dateTime.isComplete)),
            Field("day_of_week", .string(dayOfWeekName)),
            Field("day_of_week_value", .int(dayOfWeek)),
            Field("fractions256", .int(fractions256)),
            Field("fraction", .double(fractionSeconds), unit: "s"),
            Field("adjust_reason", adjustReason.fieldValue),
        ]
    }
}

/// Why a Current Time changed (a bit field; bits 4-7 are reserved and kept).
public struct AdjustReason: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let manualTimeUpdate = AdjustReason(rawValue: 0x01)
    public static let externalReferenceTimeUpdate = AdjustReason(rawValue: 0x02)
    public static let changeOfTimeZone = AdjustReason(rawValue: 0x04)
    public static let changeOfDST = AdjustReason(rawValue: 0x08)

    /// The names of bits 0-3, in order.
    public static let bitNames = [
        "manual_time_update", "external_reference_time_update", "change_of_time_zone", "change_of_dst",
    ]

    /// The names of the bits that are set (reserved ones as `reserved_bit_N`).
    public var names: [String] {
        (0..<8).compactMap { bit in
            guard rawValue & (1 << bit) != 0 else { return nil }
            return bit < Self.bitNames.count ? Self.bitNames[bit] : "reserved_bit_\(bit)"
        }
    }

    /// Bits 4-7, reserved.
    public var reservedBits: UInt8 { rawValue & 0xF0 }

    var fieldValue: FieldValue {
        .object([Field("value", .int(rawValue)), Field("set", .list(names.map { .string($0) }))])
    }
}
