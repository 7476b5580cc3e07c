/// A bounds-checked little-endian cursor over a characteristic value.
///
/// Each read returns a value and advances, or throws ``DecodeError/truncated(field:offset:needed:available:)``
/// naming the field and its offset and leaves the cursor where it was. Decoders read only through this type:
/// no subscripts, no index arithmetic, no force unwraps.
public struct ByteReader: Sendable {
    let bytes: [UInt8]
    /// The offset of the next byte to read.
    public private(set) var offset: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    /// How many bytes are left.
    public var remaining: Int { bytes.count &- offset }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset >= bytes.count }

    public mutating func readUInt8(_ field: String) throws(DecodeError) -> UInt8 {
        guard offset < bytes.count else { throw truncated(field, 1) }
        defer { offset &+= 1 }
        return bytes[offset]
    }

    public mutating func readUInt16(_ field: String) throws(DecodeError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readLittleEndian(field, width: 2))
    }

    /// Reads a 24-bit unsigned integer (used by PAMS).
    public mutating func readUInt24(_ field: String) throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(field, width: 3))
    }

    public mutating func readUInt32(_ field: String) throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(field, width: 4))
    }

    /// Reads a 40-bit unsigned integer (System ID's manufacturer identifier).
    public mutating func readUInt40(_ field: String) throws(DecodeError) -> UInt64 {
        try readLittleEndian(field, width: 5)
    }

    /// Reads `count` bytes.
    public mutating func readBytes(_ field: String, count: Int) throws(DecodeError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw truncated(field, count) }
        defer { offset &+= count }
        return bytes[offset..<(offset &+ count)]
    }

    /// Reads everything that is left (possibly nothing).
    public mutating func readRemaining() -> ArraySlice<UInt8> {
        let start = min(offset, bytes.count)
        offset = bytes.count
        return bytes[start...]
    }

    mutating func readLittleEndian(_ field: String, width: Int) throws(DecodeError) -> UInt64 {
        guard remaining >= width else { throw truncated(field, width) }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes[offset..<(offset &+ width)] {
            value |= UInt64(byte) &<< shift
            shift &+= 8
        }
        offset &+= width
        return value
    }

    @usableFromInline
    func truncated(_ field: String, _ needed: Int) -> DecodeError {
        .truncated(field: field, offset: offset, needed: needed, available: max(0, remaining))
    }
}

/// Appends little-endian fields to a characteristic value; the encoders' counterpart of ``ByteReader``.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 20) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: UInt8) { bytes.append(value) }
    public mutating func write(_ value: UInt16) { writeLittleEndian(UInt64(value), width: 2) }
    public mutating func write(_ value: UInt32) { writeLittleEndian(UInt64(value), width: 4) }
    /// Writes the low 24 bits of `value`.
    public mutating func writeUInt24(_ value: UInt32) { writeLittleEndian(UInt64(value), width: 3) }
    /// Writes the low 40 bits of `value`.
    public mutating func writeUInt40(_ value: UInt64) { writeLittleEndian(value, width: 5) }
    public mutating func write(contentsOf other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }

    mutating func writeLittleEndian(_ value: UInt64, width: Int) {
        for index in 0..<width { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
