/// PAMS Step Counter Activity Summary Data (0x2B40), Physical Activity Monitor Service 0x183E.
///
/// ```
/// offset  size  field
/// 0       1     header                segmentation: 0x80 | (segments-1) on the first, a counter after
/// 1       1     flags                 bit0 normal walking, bit1 intensity, bit2 floor steps, bit3 distance,
///                                     bit4 worn duration present; bits 5-7 reserved
/// 2       2     session id            uint16
/// 4       2     sub-session id        uint16
/// 6       4     relative timestamp    uint32
/// 10      4     sequence number       uint32
/// +       0|3   normal walking steps  uint24, each optional field in flag order
/// +       0|3   intensity steps       uint24
/// +       0|3   floor steps           uint24
/// +       0|3   distance              uint24 (unit unknown)
/// +       0|3   worn duration         uint24
/// ```
///
/// **Confidence: low.** The layout comes from a third-party Python parser and a vendor example, not from the
/// PAMS text, and no real device has been seen sending it; the distance unit is unknown, so it is kept raw.
/// The value decoded here is one whole reassembled payload; segments that arrive as separate indications are
/// joined by the caller before decoding.
public struct StepCounterActivitySummaryData: CharacteristicValue {
    public static let uuid = BluetoothUUID.stepCounterActivitySummaryData
    public static let name = "step-counter-activity-summary-data"

    public var header: UInt8
    public var sessionID: UInt16
    public var subSessionID: UInt16
    public var relativeTimestamp: UInt32
    public var sequenceNumber: UInt32
    public var normalWalkingSteps: UInt32?
    public var intensitySteps: UInt32?
    public var floorSteps: UInt32?
    /// Raw, unit unknown.
    public var distance: UInt32?
    public var wornDuration: UInt32?
    public var reservedFlags: UInt8

    public init(
        header: UInt8 = 0x80, sessionID: UInt16, subSessionID: UInt16 = 0, relativeTimestamp: UInt32,
        sequenceNumber: UInt32, normalWalkingSteps: UInt32? = nil, intensitySteps: UInt32? = nil,
        floorSteps: UInt32? = nil, distance: UInt32? = nil, wornDuration: UInt32? = nil, reservedFlags: UInt8 = 0
    ) {
        self.header = header
        self.sessionID = sessionID
        self.subSessionID = subSessionID
        self.relativeTimestamp = relativeTimestamp
        self.sequenceNumber = sequenceNumber
        self.normalWalkingSteps = normalWalkingSteps.map { $0 & 0xFF_FFFF }
        self.intensitySteps = intensitySteps.map { $0 & 0xFF_FFFF }
        self.floorSteps = floorSteps.map { $0 & 0xFF_FFFF }
        self.distance = distance.map { $0 & 0xFF_FFFF }
        self.wornDuration = wornDuration.map { $0 & 0xFF_FFFF }
        self.reservedFlags = reservedFlags & 0xE0
    }

    public init(decoding bytes: borrowing [UInt8]) throws(DecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        self = try ByteReader.read(bytes) { (reader) throws(DecodeError) in try Self(reading: &reader) }
    }

    private init(reading reader: inout ByteReader) throws(DecodeError) {
        header = try reader.readUInt8("header")
        let flags = try reader.readUInt8("flags")
        sessionID = try reader.readUInt16("session_id")
        subSessionID = try reader.readUInt16("sub_session_id")
        relativeTimestamp = try reader.readUInt32("relative_timestamp")
        sequenceNumber = try reader.readUInt32("sequence_number")
        normalWalkingSteps = flags & 0x01 == 0 ? nil : try reader.readUInt24("normal_walking_steps")
        intensitySteps = flags & 0x02 == 0 ? nil : try reader.readUInt24("intensity_steps")
        floorSteps = flags & 0x04 == 0 ? nil : try reader.readUInt24("floor_steps")
        distance = flags & 0x08 == 0 ? nil : try reader.readUInt24("distance")
        wornDuration = flags & 0x10 == 0 ? nil : try reader.readUInt24("worn_duration")
        reservedFlags = flags & 0xE0
    }

    public var flags: UInt8 {
        var flags = reservedFlags & 0xE0
        if normalWalkingSteps != nil { flags |= 0x01 }
        if intensitySteps != nil { flags |= 0x02 }
        if floorSteps != nil { flags |= 0x04 }
        if distance != nil { flags |= 0x08 }
        if wornDuration != nil { flags |= 0x10 }
        return flags
    }

    /// All steps the summary reports, or `nil` when it reports none.
    public var totalSteps: UInt32? {
        let parts = [normalWalkingSteps, intensitySteps, floorSteps].compactMap { $0 }
        return parts.isEmpty ? nil : parts.reduce(0, +)
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 29)
        writer.write(header)
        writer.write(flags)
        writer.write(sessionID)
        writer.write(subSessionID)
        writer.write(relativeTimestamp)
        writer.write(sequenceNumber)
        for field in [normalWalkingSteps, intensitySteps, floorSteps, distance, wornDuration] {
            if let field { writer.writeUInt24(field) }
        }
        return writer.bytes
    }

    public var fields: [Field] {
        [
            Field("header", .int(header)),
            Field("flags", .int(flags)),
            Field("session_id", .int(sessionID)),
            Field("sub_session_id", .int(subSessionID)),
            Field("relative_timestamp", .int(relativeTimestamp)),
            Field("sequence_number", .int(sequenceNumber)),
            Field("normal_walking_steps", .optional(normalWalkingSteps), unit: "count"),
            Field("intensity_steps", .optional(intensitySteps), unit: "count"),
            Field("floor_steps", .optional(floorSteps), unit: "count"),
            Field("distance", .optional(distance), unit: "raw"),
            Field("worn_duration", .optional(wornDuration), unit: "raw"),
            Field("total_steps", .optional(totalSteps), unit: "count"),
        ]
    }
}
