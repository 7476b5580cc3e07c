/// CSC Measurement (0x2A5B), notified by cycling speed and cadence sensors.
///
/// ```
/// offset  size  field
/// 0       1     flags                         bit0 wheel data present, bit1 crank data present, 2-7 reserved
/// +       0|4   cumulative wheel revolutions  uint32          } iff bit0
/// +       0|2   last wheel event time         uint16 1/1024 s }
/// +       0|2   cumulative crank revolutions  uint16          } iff bit1
/// +       0|2   last crank event time         uint16 1/1024 s }
/// ```
///
/// Wheel data always precedes crank data. Rates come from two consecutive measurements:
/// see ``delta(since:)``, which handles counter rollover.
public struct CSCMeasurement: CharacteristicValue {
    public static let uuid = BluetoothUUID.cscMeasurement
    public static let name = "csc-measurement"

    public struct WheelData: Equatable, Sendable {
        public var cumulativeRevolutions: UInt32
        /// 1/1024 s, wraps every 64 s.
        public var lastEventTime: UInt16
        public init(cumulativeRevolutions: UInt32, lastEventTime: UInt16) {
            self.cumulativeRevolutions = cumulativeRevolutions
            self.lastEventTime = lastEventTime
        }
    }

    public struct CrankData: Equatable, Sendable {
        public var cumulativeRevolutions: UInt16
        /// 1/1024 s, wraps every 64 s.
        public var lastEventTime: UInt16
        public init(cumulativeRevolutions: UInt16, lastEventTime: UInt16) {
            self.cumulativeRevolutions = cumulativeRevolutions
            self.lastEventTime = lastEventTime
        }
    }

    public var wheel: WheelData?
    public var crank: CrankData?
    public var reservedFlags: UInt8

    public init(wheel: WheelData? = nil, crank: CrankData? = nil, reservedFlags: UInt8 = 0) {
        self.wheel = wheel
        self.crank = crank
        self.reservedFlags = reservedFlags & 0xFC
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        let flags = try reader.readUInt8("flags")
        if flags & 0x01 != 0 {
            wheel = WheelData(
                cumulativeRevolutions: try reader.readUInt32("cumulative_wheel_revolutions"),
                lastEventTime: try reader.readUInt16("last_wheel_event_time"))
        } else {
            wheel = nil
        }
        if flags & 0x02 != 0 {
            crank = CrankData(
                cumulativeRevolutions: try reader.readUInt16("cumulative_crank_revolutions"),
                lastEventTime: try reader.readUInt16("last_crank_event_time"))
        } else {
            crank = nil
        }
        reservedFlags = flags & 0xFC
    }

    public var flags: UInt8 {
        reservedFlags & 0xFC | (wheel == nil ? 0 : 0x01) | (crank == nil ? 0 : 0x02)
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 11)
        writer.write(flags)
        if let wheel {
            writer.write(wheel.cumulativeRevolutions)
            writer.write(wheel.lastEventTime)
        }
        if let crank {
            writer.write(crank.cumulativeRevolutions)
            writer.write(crank.lastEventTime)
        }
        return writer.bytes
    }

    /// What changed since `previous`, with counters and event times taken modulo their width.
    public func delta(since previous: CSCMeasurement) -> CSCDelta {
        var delta = CSCDelta()
        if let wheel, let before = previous.wheel {
            delta.wheelRevolutions = wheel.cumulativeRevolutions &- before.cumulativeRevolutions
            delta.wheelEventTime = wheel.lastEventTime &- before.lastEventTime
        }
        if let crank, let before = previous.crank {
            delta.crankRevolutions = crank.cumulativeRevolutions &- before.cumulativeRevolutions
            delta.crankEventTime = crank.lastEventTime &- before.lastEventTime
        }
        return delta
    }

    public var fields: [Field] {
        [
            Field("flags", .int(flags)),
            Field("cumulative_wheel_revolutions", .optional(wheel?.cumulativeRevolutions), unit: "count"),
            Field("last_wheel_event_time", .optional(wheel?.lastEventTime), unit: "1/1024 s"),
            Field("cumulative_crank_revolutions", .optional(crank?.cumulativeRevolutions), unit: "count"),
            Field("last_crank_event_time", .optional(crank?.lastEventTime), unit: "1/1024 s"),
            Field("reserved_flags", .int(reservedFlags)),
        ]
    }
}

/// The change between two CSC measurements. A `nil` block was missing from either measurement.
///
/// An event time delta of 0 means no new revolution completed: rates are `nil` then, never a division by zero.
/// More than 64 s between events cannot be told from a shorter gap; the caller treats a long wall-clock gap
/// as a break.
public struct CSCDelta: Equatable, Sendable {
    public var wheelRevolutions: UInt32?
    /// 1/1024 s.
    public var wheelEventTime: UInt16?
    public var crankRevolutions: UInt16?
    /// 1/1024 s.
    public var crankEventTime: UInt16?

    public init(
        wheelRevolutions: UInt32? = nil, wheelEventTime: UInt16? = nil,
        crankRevolutions: UInt16? = nil, crankEventTime: UInt16? = nil
    ) {
        self.wheelRevolutions = wheelRevolutions
        self.wheelEventTime = wheelEventTime
        self.crankRevolutions = crankRevolutions
        self.crankEventTime = crankEventTime
    }

    /// Crank cadence in revolutions per minute; `nil` without crank data or without a new crank event.
    public var crankCadence: Double? {
        guard let revolutions = crankRevolutions, let time = crankEventTime, time > 0 else { return nil }
        return Double(revolutions) * 60 * 1024 / Double(time)
    }

    /// Wheel revolutions per second; `nil` without wheel data or without a new wheel event.
    public var wheelRevolutionsPerSecond: Double? {
        guard let revolutions = wheelRevolutions, let time = wheelEventTime, time > 0 else { return nil }
        return Double(revolutions) * 1024 / Double(time)
    }

    /// Speed in m/s for a wheel of `circumference` metres (the protocol does not carry it).
    public func wheelSpeed(circumference: Double) -> Double? {
        wheelRevolutionsPerSecond.map { $0 * circumference }
    }

    public var fields: [Field] {
        [
            Field("wheel_revolutions", .optional(wheelRevolutions), unit: "count"),
            Field("wheel_event_time", .optional(wheelEventTime), unit: "1/1024 s"),
            Field("crank_revolutions", .optional(crankRevolutions), unit: "count"),
            Field("crank_event_time", .optional(crankEventTime), unit: "1/1024 s"),
            Field("wheel_revolutions_per_second", .optional(wheelRevolutionsPerSecond), unit: "1/s"),
            Field("crank_cadence", .optional(crankCadence), unit: "count/min"),
        ]
    }
}
