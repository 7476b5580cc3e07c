/// A bounds-checked cursor over captured bytes (both byte orders, as btsnoop is big-endian and HCI little-endian).
/// Every read returns `nil` when too few bytes are left and then leaves the cursor where it was.
struct ByteCursor {
    let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    var remaining: Int { bytes.endIndex - position }
    var isAtEnd: Bool { position >= bytes.endIndex }

    mutating func u8() -> UInt8? {
        guard position < bytes.endIndex else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func le16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    mutating func be32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 { value = value << 8 | UInt32(bytes[position + offset]) }
        position += 4
        return value
    }

    mutating func be64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        var value: UInt64 = 0
        for offset in 0..<8 { value = value << 8 | UInt64(bytes[position + offset]) }
        position += 8
        return value
    }

    /// The next `count` bytes.
    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    /// Everything left.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }
}
