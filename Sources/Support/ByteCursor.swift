/// The order of a multi-byte integer's bytes: Bluetooth's ATT and HCI are little-endian, btsnoop big-endian.
public enum Endianness: Hashable, Sendable {
    case little
    case big
}

/// A bounds-checked cursor over bytes: the one reader behind GATT's decoders (``ByteCursor`` over borrowed bytes,
/// with typed errors on top), the btsnoop and HCI importer, and the store's blob codecs.
///
/// Every read returns its value and advances, or returns `nil` when too few bytes are left and then leaves the cursor
/// where it was, so a caller may try another reading or name the field and ``offset`` in its own error. Integers are
/// 1 to 8 bytes wide in either byte order. ``take(_:)`` and ``rest()`` hand out the bytes themselves as the
/// storage's slice (an `ArraySlice` of an array, a rebased buffer of a buffer), never a copy.
///
/// ```swift
/// var cursor = ByteCursor(record.data)
/// guard let code = cursor.readUInt8(), let length = cursor.readUInt16(.little), let body = cursor.take(Int(length))
/// else { return nil }
/// ```
///
/// Over an `UnsafeBufferPointer` the cursor borrows: it is valid only while the buffer is. Its reads are always
/// inlined: GATT's decoders read every field through them, tens of millions of values a second.
public struct ByteCursor<Storage: RandomAccessCollection<UInt8>> where Storage.Index == Int {
    public let bytes: Storage
    /// The index in ``bytes`` of the next byte.
    @usableFromInline var index: Int

    @inlinable
    public init(_ bytes: Storage) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// How many bytes were read (from the start of ``bytes``): where the next read starts.
    @inlinable
    public var offset: Int { index &- bytes.startIndex }

    /// How many bytes are left.
    @inlinable
    public var remaining: Int { bytes.endIndex &- index }

    /// Whether every byte has been read.
    @inlinable
    public var isAtEnd: Bool { index >= bytes.endIndex }

    @inlinable @inline(__always)
    public mutating func readUInt8() -> UInt8? {
        guard index < bytes.endIndex else { return nil }
        defer { index &+= 1 }
        return bytes[index]
    }

    @inlinable @inline(__always)
    public mutating func readUInt16(_ order: Endianness) -> UInt16? {
        readUnsigned(byteCount: 2, order).map { UInt16(truncatingIfNeeded: $0) }
    }

    /// A 24-bit unsigned integer (PAMS' counters).
    @inlinable @inline(__always)
    public mutating func readUInt24(_ order: Endianness) -> UInt32? {
        readUnsigned(byteCount: 3, order).map { UInt32(truncatingIfNeeded: $0) }
    }

    @inlinable @inline(__always)
    public mutating func readUInt32(_ order: Endianness) -> UInt32? {
        readUnsigned(byteCount: 4, order).map { UInt32(truncatingIfNeeded: $0) }
    }

    /// A 40-bit unsigned integer (System ID's manufacturer identifier).
    @inlinable @inline(__always)
    public mutating func readUInt40(_ order: Endianness) -> UInt64? {
        readUnsigned(byteCount: 5, order)
    }

    @inlinable @inline(__always)
    public mutating func readUInt64(_ order: Endianness) -> UInt64? {
        readUnsigned(byteCount: 8, order)
    }

    /// An unsigned integer of `byteCount` bytes (1 to 8; `nil` for any other count).
    @inlinable @inline(__always)
    public mutating func readUnsigned(byteCount: Int, _ order: Endianness) -> UInt64? {
        guard byteCount > 0, byteCount <= 8, bytes.endIndex &- index >= byteCount else { return nil }
        // Counted loops with wrapping arithmetic: with a constant width nothing is left to check, and reading from
        // a buffer becomes one load.
        var value: UInt64 = 0
        var step = 0
        switch order {
        case .little:
            while step < byteCount {
                value |= UInt64(bytes[index &+ step]) &<< UInt64(truncatingIfNeeded: step &* 8)
                step &+= 1
            }
        case .big:
            while step < byteCount {
                value = value &<< 8 | UInt64(bytes[index &+ step])
                step &+= 1
            }
        }
        index &+= byteCount
        return value
    }

    /// The next `count` bytes.
    @inlinable @inline(__always)
    public mutating func take(_ count: Int) -> Storage.SubSequence? {
        guard count >= 0, bytes.endIndex &- index >= count else { return nil }
        defer { index &+= count }
        return bytes[index..<(index &+ count)]
    }

    /// Everything left (possibly nothing).
    @inlinable
    public mutating func rest() -> Storage.SubSequence {
        defer { index = bytes.endIndex }
        return bytes[index..<bytes.endIndex]
    }
}

extension ByteCursor: Sendable where Storage: Sendable {}
