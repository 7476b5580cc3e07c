internal import Support

/// The btsnoop capture container (version 1): a 16-byte header, then records with a 24-byte big-endian header.
///
/// Header: `btsnoop\0`, version (u32 = 1), datalink (u32). Record: original length, included length, flags, drops
/// (u32 each), timestamp (i64, microseconds since 0000-01-01 00:00 UTC), then the included bytes.
public enum Btsnoop {
    /// The datalinks the importer reads.
    public enum Datalink: UInt32, Hashable, Sendable, CaseIterable {
        /// HCI without a packet-type byte; the flags say command/event or data.
        case hciUnencapsulated = 1001
        /// HCI UART (H4): a packet-type byte first. Android's HCI snoop log.
        case hciUART = 1002
        /// The Linux monitor (`btmon -w`): the flags hold the adapter index and an opcode.
        case linuxMonitor = 2001
    }

    /// Microseconds from 0000-01-01 to the Unix epoch, as btsnoop counts.
    public static let epochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000
    static let magic: [UInt8] = Array("btsnoop\0".utf8)

    /// One record as stored.
    public struct Record: Hashable, Sendable {
        /// 1-based position in the file.
        public var number: Int
        public var originalLength: UInt32
        public var flags: UInt32
        public var drops: UInt32
        /// Microseconds since 0000-01-01 (see ``epochOffsetMicroseconds``).
        public var timestamp: Int64
        public var data: ArraySlice<UInt8>

        /// Microseconds since the Unix epoch.
        public var wallMicroseconds: Int64 { timestamp &- Btsnoop.epochOffsetMicroseconds }
    }

    /// Why a file cannot be read at all.
    public struct FormatError: Error, Hashable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The header's datalink, and the records; a damaged tail (a record cut short) ends the list and is reported.
    public struct Capture: Sendable {
        public var datalink: UInt32
        public var records: [Record]
        /// Set when the file ends inside a record: its number and what is missing.
        public var truncatedRecord: (number: Int, reason: String)?
    }

    /// Splits a capture into records.
    ///
    /// - Throws: ``FormatError`` when the header is not a btsnoop version 1 header.
    public static func parse(_ bytes: [UInt8]) throws(FormatError) -> Capture {
        var cursor = ByteCursor(bytes)
        guard let magic = cursor.take(8), Array(magic) == Self.magic else {
            throw FormatError(reason: "not a btsnoop file (no 'btsnoop\\0' magic)")
        }
        guard let version = cursor.readUInt32(.big), let datalink = cursor.readUInt32(.big) else {
            throw FormatError(reason: "btsnoop header cut short")
        }
        guard version == 1 else { throw FormatError(reason: "btsnoop version \(version) (only 1 is known)") }
        var capture = Capture(datalink: datalink, records: [])
        var number = 0
        while !cursor.isAtEnd {
            number += 1
            guard let original = cursor.readUInt32(.big), let included = cursor.readUInt32(.big),
                let flags = cursor.readUInt32(.big),
                let drops = cursor.readUInt32(.big), let timestamp = cursor.readUInt64(.big)
            else {
                capture.truncatedRecord = (number, "record header cut short")
                break
            }
            guard let data = cursor.take(Int(included)) else {
                capture.truncatedRecord = (number, "record holds \(cursor.remaining) of its \(included) bytes")
                break
            }
            capture.records.append(
                Record(
                    number: number, originalLength: original, flags: flags, drops: drops,
                    timestamp: Int64(bitPattern: timestamp), data: data))
        }
        return capture
    }
}

/// Writes btsnoop captures (the tests' captures, the fuzzer's seeds).
public struct BtsnoopWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(datalink: Btsnoop.Datalink) {
        self.init(rawDatalink: datalink.rawValue)
    }

    public init(rawDatalink: UInt32) {
        bytes = Btsnoop.magic
        Self.appendBE32(1, to: &bytes)
        Self.appendBE32(rawDatalink, to: &bytes)
    }

    /// Appends one record; `wallMicroseconds` is since the Unix epoch.
    public mutating func append(_ data: [UInt8], flags: UInt32, wallMicroseconds: Int64, originalLength: UInt32? = nil)
    {
        Self.appendBE32(originalLength ?? UInt32(data.count), to: &bytes)
        Self.appendBE32(UInt32(data.count), to: &bytes)
        Self.appendBE32(flags, to: &bytes)
        Self.appendBE32(0, to: &bytes)
        let stamp = UInt64(bitPattern: wallMicroseconds &+ Btsnoop.epochOffsetMicroseconds)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: stamp >> shift)) }
        bytes.append(contentsOf: data)
    }

    static func appendBE32(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
