/// Date Time (0x2A08), and the 7-byte time stamp that weight, body composition, blood pressure, temperature and
/// PLX spot-check measurements embed.
///
/// ```
/// offset  size  field
/// 0       2     year      uint16, 1582-9999; 0 = unknown
/// 2       1     month     1-12; 0 = unknown
/// 3       1     day       1-31; 0 = unknown
/// 4       1     hours     0-23
/// 5       1     minutes   0-59
/// 6       1     seconds   0-59
/// ```
///
/// It is the sensor's local wall-clock time, with no time zone. The fields are kept exactly as sent, whatever
/// they hold (``DecodingPolicy/dateTimeValues``): ``isComplete`` says whether it names one second of a real
/// calendar day, and the gateway falls back to the receive time when it does not.
public struct DateTime: CharacteristicValue, Hashable, CustomStringConvertible {
    public static let uuid = BluetoothUUID.dateTime
    public static let name = "date-time"
    /// The size of the value on the wire.
    public static let size = 7

    public var year: UInt16
    public var month: UInt8
    public var day: UInt8
    public var hours: UInt8
    public var minutes: UInt8
    public var seconds: UInt8

    public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8 = 0, minutes: UInt8 = 0, seconds: UInt8 = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        try requireLength(bytes, Self.size)
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    /// Reads the seven bytes of an embedded time stamp; a value that ends inside it is `truncated`, naming
    /// `time_stamp`.
    init(reading reader: inout ByteReader, field: StaticString = "time_stamp") throws(DecodeError) {
        year = try reader.readUInt16(field)
        month = try reader.readUInt8(field)
        day = try reader.readUInt8(field)
        hours = try reader.readUInt8(field)
        minutes = try reader.readUInt8(field)
        seconds = try reader.readUInt8(field)
    }

    func write(to writer: inout ByteWriter) {
        writer.write(year)
        writer.write(month)
        writer.write(day)
        writer.write(hours)
        writer.write(minutes)
        writer.write(seconds)
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        write(to: &writer)
        return writer.bytes
    }

    /// Whether year, month or day is 0, which the specification defines as "not known".
    public var hasUnknownDate: Bool { year == 0 || month == 0 || day == 0 }

    /// Whether every field is known and in range, and the day exists in that month (29 February only in leap
    /// years): a time the gateway can use.
    public var isComplete: Bool {
        guard (1582...9999).contains(year), (1...12).contains(month), day >= 1, hours <= 23, minutes <= 59,
            seconds <= 59
        else { return false }
        return Int(day) <= Self.daysIn(month: Int(month), year: Int(year))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `YYYY-MM-DDThh:mm:ss` with the fields as sent (zeros included), e.g. `2026-12-02T07:30:00`.
    public var description: String {
        func two(_ value: UInt8) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        let paddedYear = String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
        return "\(paddedYear)-\(two(month))-\(two(day))T\(two(hours)):\(two(minutes)):\(two(seconds))"
    }

    public var fields: [Field] {
        [
            Field("date_time", .string(description)),
            Field("year", .int(year)), Field("month", .int(month)), Field("day", .int(day)),
            Field("hours", .int(hours)), Field("minutes", .int(minutes)), Field("seconds", .int(seconds)),
            Field("complete", .bool(isComplete)),
        ]
    }

    /// How a measurement's `fields` show an embedded time stamp: its text, or `null` when absent.
    static func fieldValue(_ stamp: DateTime?) -> FieldValue {
        stamp.map { .string($0.description) } ?? .null
    }
}

/// Which unit system a weight scale or body composition analyser used (flags bit 0).
public enum MeasurementUnits: String, Sendable, Equatable {
    /// Kilograms and metres.
    case si
    /// Pounds and inches.
    case imperial

    init(bit: Bool) { self = bit ? .imperial : .si }
    var bit: Bool { self == .imperial }
}
