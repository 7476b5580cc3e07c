/// Heart Rate Measurement (0x2A37), notified about once a second by a heart-rate sensor.
///
/// ```
/// offset  size  field
/// 0       1     flags          bit0 value format, bits1-2 sensor contact, bit3 energy, bit4 RR, bits5-7 reserved
/// 1       1|2   heart rate     uint8 or uint16 LE, beats per minute
/// +       0|2   energy         uint16 LE, kJ since the last reset; 0xFFFF = saturated
/// +       0|2n  RR intervals   uint16 LE each, 1/1024 s, oldest first, as many as fit
/// ```
///
/// Edge cases (reserved bits, trailing bytes, an odd RR byte, 0 bpm) are decided in ``DecodingPolicy``.
/// Decoding does not allocate: ``rrIntervals`` is a view over the received bytes.
public struct HeartRateMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.heartRateMeasurement
    public static let name = "heart-rate-measurement"

    /// How the heart rate was sent (flags bit 0).
    public enum ValueFormat: Sendable, Equatable {
        case uint8, uint16
    }

    /// The 2-bit Sensor Contact Status field, `(flags >> 1) & 3`, as a meaning.
    public enum SensorContact: Sendable, Equatable {
        /// 0 or 1: the sensor does not report contact. This does not mean "not worn".
        case notSupported
        /// 2: supported, and the sensor is not in contact with the skin.
        case notDetected
        /// 3: supported, and the sensor is in contact.
        case detected

        /// The field's value as sent (1 is also "not supported"; see ``init(bits:)``).
        public var bits: UInt8 {
            switch self {
            case .notSupported: 0
            case .notDetected: 2
            case .detected: 3
            }
        }

        /// The meaning of the two bits: 0 and 1 both mean not supported.
        public init(bits: UInt8) {
            switch bits & 0b11 {
            case 0b10: self = .notDetected
            case 0b11: self = .detected
            default: self = .notSupported
            }
        }

        public var name: String {
            switch self {
            case .notSupported: "not_supported"
            case .notDetected: "not_detected"
            case .detected: "detected"
            }
        }
    }

    /// Beats per minute, as sent (0 is possible; see ``DecodingPolicy/zeroHeartRate``).
    public var heartRate: UInt16
    public var format: ValueFormat
    /// The Sensor Contact Status bits as sent (0-3), so that re-encoding gives back the same flags.
    public var sensorContactBits: UInt8
    /// Energy expended since the last reset, in kJ. `0xFFFF` means saturated: a reset is due.
    public var energyExpended: UInt16?
    /// Beat-to-beat intervals in 1/1024 s, oldest first. Empty when no beat completed since the last notification.
    public var rrIntervals: RRIntervals
    /// Flag bits 5-7, reserved for future use; decoded values ignore them.
    public var reservedFlags: UInt8

    /// The value that saturated energy counters hold.
    public static let energySaturated: UInt16 = 0xFFFF

    public init(
        heartRate: UInt16, format: ValueFormat? = nil, sensorContact: SensorContact = .notSupported,
        energyExpended: UInt16? = nil, rrIntervals: RRIntervals = [], reservedFlags: UInt8 = 0
    ) {
        self.heartRate = heartRate
        // A value above 255 cannot be sent as uint8, whatever the caller asked for.
        self.format = heartRate > UInt16(UInt8.max) ? .uint16 : (format ?? .uint8)
        self.sensorContactBits = sensorContact.bits
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
        self.reservedFlags = reservedFlags & 0xE0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        if flags & 0x01 == 0 {
            format = .uint8
            heartRate = UInt16(try reader.readUInt8("heart_rate"))
        } else {
            format = .uint16
            heartRate = try reader.readUInt16("heart_rate")
        }
        sensorContactBits = (flags >> 1) & 0b11
        energyExpended = flags & 0x08 == 0 ? nil : try reader.readUInt16("energy_expended")
        var intervals = RRIntervals()
        if flags & 0x10 != 0 {
            try intervals.read(from: &reader)
        }
        rrIntervals = intervals
        // Without RR intervals, bytes after the last announced field are ignored (DecodingPolicy.trailingBytes).
        reservedFlags = flags & 0xE0
    }

    public var flags: UInt8 {
        var flags = reservedFlags & 0xE0
        if format == .uint16 { flags |= 0x01 }
        flags |= (sensorContactBits & 0b11) << 1
        if energyExpended != nil { flags |= 0x08 }
        if !rrIntervals.isEmpty { flags |= 0x10 }
        return flags
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 5 + 2 * rrIntervals.count)
        writer.write(flags)
        if format == .uint16 { writer.write(heartRate) } else { writer.write(UInt8(truncatingIfNeeded: heartRate)) }
        if let energyExpended { writer.write(energyExpended) }
        for interval in rrIntervals { writer.write(interval) }
        return writer.bytes
    }

    /// What the contact bits mean (see ``DecodingPolicy/sensorContact``).
    public var sensorContact: SensorContact {
        get { SensorContact(bits: sensorContactBits) }
        set { sensorContactBits = newValue.bits }
    }

    /// Whether the energy counter is stuck at its maximum and needs a reset through the control point.
    public var isEnergySaturated: Bool { energyExpended == Self.energySaturated }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("heart_rate", .int(heartRate), unit: "count/min"),
            Field("heart_rate_format", .string(format == .uint8 ? "uint8" : "uint16")),
            Field("sensor_contact", .string(sensorContact.name)),
            Field("sensor_contact_supported", .bool(sensorContact != .notSupported)),
            Field(
                "sensor_contact_detected", sensorContact == .notSupported ? .null : .bool(sensorContact == .detected)),
            Field("energy_expended", .optional(energyExpended), unit: "kJ"),
            Field("energy_expended_saturated", .bool(isEnergySaturated)),
            Field("rr_intervals", .list(rrIntervals.map { .int($0) }), unit: "1/1024 s"),
            Field("rr_intervals_ms", .list(rrIntervals.map { .double(Double($0) * 1000 / 1024) }), unit: "ms"),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// The RR intervals of one Heart Rate Measurement, in 1/1024 s, oldest first.
///
/// Up to ``inlineCapacity`` intervals (more than a default-MTU notification can carry) are stored inline, so
/// decoding a measurement allocates nothing; longer lists (large MTUs) go to the heap. Build one from an array
/// literal or `[UInt16]`; convert with `Array(measurement.rrIntervals)`.
public struct RRIntervals: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral {
    /// How many intervals fit without an allocation.
    public static let inlineCapacity = 12

    /// Up to 12 intervals, four to a word, little end first.
    private var inline: (UInt64, UInt64, UInt64)
    /// All intervals when there are more than `inlineCapacity`; empty (no allocation) otherwise.
    private var overflow: [UInt16]
    public private(set) var count: Int

    /// No intervals (no beat completed since the previous notification).
    public init() {
        inline = (0, 0, 0)
        overflow = []
        count = 0
    }

    public init(_ intervals: [UInt16]) {
        self.init()
        count = intervals.count
        if count > Self.inlineCapacity {
            overflow = intervals
        } else {
            for (index, interval) in intervals.enumerated() { setInline(index, interval) }
        }
    }

    public init(arrayLiteral elements: UInt16...) {
        self.init(elements)
    }

    /// Replaces the intervals with every remaining uint16 from `reader`; at least one must be there and no byte
    /// may be left over.
    mutating func read(from reader: inout ByteReader) throws(DecodeError) {
        let start = reader.offset
        let available = reader.remaining
        guard available > 0 else {
            throw .truncated(field: "rr_interval", offset: start, needed: 2, available: 0)
        }
        guard available % 2 == 0 else {
            throw .malformed(
                field: "rr_interval", offset: start + available - 1,
                reason: "one byte left over after \(available / 2) whole RR intervals")
        }
        let total = available / 2
        if total > Self.inlineCapacity {
            overflow.reserveCapacity(total)
            for _ in 0..<total { overflow.append(try reader.readUInt16("rr_interval")) }
        } else {
            for index in 0..<total { setInline(index, try reader.readUInt16("rr_interval")) }
        }
        count = total
    }

    private mutating func setInline(_ position: Int, _ value: UInt16) {
        let bits = UInt64(value) << UInt64(16 * (position & 3))
        switch position >> 2 {
        case 0: inline.0 |= bits
        case 1: inline.1 |= bits
        default: inline.2 |= bits
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> UInt16 {
        precondition(position >= 0 && position < count, "RR interval index out of range")
        if count > Self.inlineCapacity { return overflow[position] }
        let shift = UInt64(16 * (position & 3))
        switch position >> 2 {
        case 0: return UInt16(truncatingIfNeeded: inline.0 >> shift)
        case 1: return UInt16(truncatingIfNeeded: inline.1 >> shift)
        default: return UInt16(truncatingIfNeeded: inline.2 >> shift)
        }
    }

    /// The intervals in seconds.
    public var seconds: [Double] { map { Double($0) / 1024 } }

    public static func == (lhs: RRIntervals, rhs: RRIntervals) -> Bool {
        lhs.elementsEqual(rhs)
    }
}
