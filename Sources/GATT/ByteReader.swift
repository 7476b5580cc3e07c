/// A bounds-checked little-endian cursor over a characteristic value.
///
/// Each read returns a value and advances, or throws ``DecodeError/truncated(field:offset:needed:available:)``
/// naming the field and its offset and leaves the cursor where it was. Decoders read only through this type:
/// no subscripts, no index arithmetic, no force unwraps.
///
/// A reader borrows the bytes for the duration of ``read(_:_:)`` and never owns them, so decoding costs no
/// reference counting (the hot path decodes tens of millions of values a second). Never let a reader escape the
/// closure: it is only valid inside it (which is why it cannot be created any other way).
///
/// ```swift
/// let heartRate = try ByteReader.read(bytes) { reader throws(DecodeError) in
///     let flags = try reader.readUInt8("flags")
///     return flags & 1 == 0 ? UInt16(try reader.readUInt8("heart_rate")) : try reader.readUInt16("heart_rate")
/// }
/// ```
public struct ByteReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    public private(set) var offset: Int

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.offset = 0
    }

    /// Runs `body` with a reader over `bytes`.
    @inline(__always)
    public static func read<Result>(
        _ bytes: borrowing [UInt8], _ body: (inout ByteReader) throws(DecodeError) -> Result
    ) throws(DecodeError) -> Result {
        try bytes.withUnsafeBufferPointer { (buffer) throws(DecodeError) -> Result in
            var reader = ByteReader(buffer)
            return try body(&reader)
        }
    }

    /// How many bytes are left.
    public var remaining: Int { bytes.count &- offset }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset >= bytes.count }

    @inline(__always)
    public mutating func readUInt8(_ field: StaticString) throws(DecodeError) -> UInt8 {
        guard offset < bytes.count else { throw truncated(field, 1) }
        defer { offset &+= 1 }
        return bytes[offset]
    }

    @inline(__always)
    public mutating func readUInt16(_ field: StaticString) throws(DecodeError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readLittleEndian(field, width: 2))
    }

    /// Reads a 24-bit unsigned integer (used by PAMS).
    @inline(__always)
    public mutating func readUInt24(_ field: StaticString) throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(field, width: 3))
    }

    @inline(__always)
    public mutating func readUInt32(_ field: StaticString) throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(field, width: 4))
    }

    /// Reads a 40-bit unsigned integer (System ID's manufacturer identifier).
    public mutating func readUInt40(_ field: StaticString) throws(DecodeError) -> UInt64 {
        try readLittleEndian(field, width: 5)
    }

    /// Reads `count` bytes into a new array.
    public mutating func readBytes(_ field: StaticString, count: Int) throws(DecodeError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw truncated(field, count) }
        defer { offset &+= count }
        return Array(bytes[offset..<(offset &+ count)])
    }

    /// Reads everything that is left (possibly nothing) into a new array.
    public mutating func readRemaining() -> [UInt8] {
        let start = min(offset, bytes.count)
        offset = bytes.count
        return Array(bytes[start...])
    }

    @inline(__always)
    mutating func readLittleEndian(_ field: StaticString, width: Int) throws(DecodeError) -> UInt64 {
        guard remaining >= width else { throw truncated(field, width) }
        var value: UInt64 = 0
        var index = offset
        var shift: UInt64 = 0
        while shift < UInt64(width) &* 8 {
            value |= UInt64(bytes[index]) &<< shift
            index &+= 1
            shift &+= 8
        }
        offset = index
        return value
    }

    func truncated(_ field: StaticString, _ needed: Int) -> DecodeError {
        .truncated(field: field.description, offset: offset, needed: needed, available: max(0, remaining))
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
