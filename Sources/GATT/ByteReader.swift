internal import Support

/// A bounds-checked little-endian reader of a characteristic value: Support's ``ByteCursor`` with errors that name
/// the field.
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
    private var cursor: ByteCursor<UnsafeBufferPointer<UInt8>>

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        cursor = ByteCursor(bytes)
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

    /// The offset of the next byte to read.
    public var offset: Int { cursor.offset }

    /// How many bytes are left.
    public var remaining: Int { cursor.remaining }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { cursor.isAtEnd }

    @inline(__always)
    public mutating func readUInt8(_ field: StaticString) throws(DecodeError) -> UInt8 {
        guard let value = cursor.readUInt8() else { throw truncated(field, 1) }
        return value
    }

    @inline(__always)
    public mutating func readUInt16(_ field: StaticString) throws(DecodeError) -> UInt16 {
        guard let value = cursor.readUInt16(.little) else { throw truncated(field, 2) }
        return value
    }

    /// Reads a 24-bit unsigned integer (used by PAMS).
    @inline(__always)
    public mutating func readUInt24(_ field: StaticString) throws(DecodeError) -> UInt32 {
        guard let value = cursor.readUInt24(.little) else { throw truncated(field, 3) }
        return value
    }

    @inline(__always)
    public mutating func readUInt32(_ field: StaticString) throws(DecodeError) -> UInt32 {
        guard let value = cursor.readUInt32(.little) else { throw truncated(field, 4) }
        return value
    }

    /// Reads a 40-bit unsigned integer (System ID's manufacturer identifier).
    public mutating func readUInt40(_ field: StaticString) throws(DecodeError) -> UInt64 {
        guard let value = cursor.readUInt40(.little) else { throw truncated(field, 5) }
        return value
    }

    /// Reads `count` bytes into a new array.
    public mutating func readBytes(_ field: StaticString, count: Int) throws(DecodeError) -> [UInt8] {
        guard let bytes = cursor.take(count) else { throw truncated(field, count) }
        return Array(bytes)
    }

    /// Reads everything that is left (possibly nothing) into a new array.
    public mutating func readRemaining() -> [UInt8] {
        Array(cursor.rest())
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
