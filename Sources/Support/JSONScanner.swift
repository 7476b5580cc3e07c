/// The fast path over one JSON text: the steps a reader of a known, common shape takes without building values
/// (the trace reader's value lines, docs/trace-format.md), and that ``JSONReader`` takes for its plain strings and
/// integers.
///
/// Every step checks the end, throws nothing, and either consumes what it reads or returns `nil` (or `false`) and
/// leaves the position where it was. A step that declines decides nothing: the text may still be valid JSON that
/// ``JSONReader`` reads (with an escape, a fraction), or not be JSON, which ``JSONReader`` words.
///
/// ```swift
/// var scanner = JSONScanner(line)
/// scanner.skipSpace()
/// guard scanner.take(UInt8(ascii: "{")), let key = scanner.plainString() else { return nil }
/// ```
public struct JSONScanner {
    public let bytes: UnsafeBufferPointer<UInt8>
    @usableFromInline var position: Int

    @inlinable
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        position = 0
    }

    /// The offset of the next byte.
    @inlinable
    public var index: Int { position }

    @inlinable
    public var atEnd: Bool { position >= bytes.count }

    /// The next byte, not consumed.
    @inlinable
    public func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Skips JSON's white space: space, tab, line feed, carriage return.
    @inlinable
    public mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): position &+= 1
            default: return
            }
        }
    }

    /// Consumes `byte` when it is next.
    @inlinable
    public mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position &+= 1
        return true
    }

    /// Consumes `count` bytes (at most what is left; none for a negative count).
    @inlinable
    public mutating func skip(_ count: Int) {
        position = count < bytes.count &- position ? position &+ max(0, count) : bytes.count
    }

    /// The bytes from `start` up to `end`, which lie within the text: a buffer made directly, without the checks of a
    /// range and a slice.
    @inlinable
    func bytes(from start: Int, to end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes.baseAddress.map { $0 + start }, count: end &- start)
    }

    /// The 8 bytes from `position + offset` as a little-endian word (the first byte lowest), when there are that many:
    /// for recognising keys by their bytes.
    @inlinable
    public func word(at offset: Int) -> UInt64? {
        guard offset >= 0, bytes.count &- position &- offset >= 8, let base = bytes.baseAddress else { return nil }
        return UInt64(littleEndian: UnsafeRawPointer(base + (position &+ offset)).loadUnaligned(as: UInt64.self))
    }

    /// Consumes `word` (`true`, `false`, `null`) when it is next.
    @inlinable
    public mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count &- position >= count else { return false }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[position &+ $0] == expected[$0] }
        }
        if matches { position &+= count }
        return matches
    }

    /// The bytes between double quotes when they are printable ASCII without a backslash: a string that reads as
    /// it is written.
    @inlinable
    public mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        let start = position
        guard take(UInt8(ascii: "\"")) else { return nil }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position &+= 1
                return bytes(from: start &+ 1, to: position &- 1)
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { break }
            position &+= 1
        }
        position = start
        return nil
    }

    /// The bytes between double quotes, unchecked: for fields whose own parser accepts only a few ASCII characters,
    /// none of them a backslash or a control character (so that an escape, or anything JSON refuses in a string,
    /// fails that parser).
    @inlinable
    public mutating func rawString() -> UnsafeBufferPointer<UInt8>? {
        let start = position
        guard take(UInt8(ascii: "\"")) else { return nil }
        while position < bytes.count {
            if bytes[position] == UInt8(ascii: "\"") {
                position &+= 1
                return bytes(from: start &+ 1, to: position &- 1)
            }
            position &+= 1
        }
        position = start
        return nil
    }

    /// A JSON integer (no leading zeros, no fraction or exponent after it) that fits an `Int64`; digits are read 8 at
    /// a time.
    @inlinable
    public mutating func integer() -> Int64? {
        let start = position
        let negative = take(UInt8(ascii: "-"))
        let digits = position
        var magnitude: UInt64 = 0
        while let word = word(at: 0), Self.allDigits(word) {
            magnitude = magnitude &* 100_000_000 &+ Self.eightDigits(word)
            position &+= 8
        }
        while position < bytes.count {
            let digit = bytes[position] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            magnitude = magnitude &* 10 &+ UInt64(digit)
            position &+= 1
        }
        // 19 digits cannot overflow a UInt64; longer numbers are for the general reader.
        let count = position &- digits
        var valid = count > 0 && count <= 19 && !(count > 1 && bytes[digits] == UInt8(ascii: "0"))
        if valid, position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): valid = false
            default: break
            }
        }
        if valid {
            if negative, magnitude <= UInt64(Int64.max) &+ 1 {
                return magnitude == UInt64(Int64.max) &+ 1 ? .min : -Int64(magnitude)
            }
            if !negative, magnitude <= UInt64(Int64.max) { return Int64(magnitude) }
        }
        position = start
        return nil
    }

    /// Skips a value that is a string without escapes or control characters (any other UTF-8 may be in it), an
    /// integer, `true` or `false`.
    @inlinable
    public mutating func skipPlainValue() -> Bool {
        guard let first = peek() else { return false }
        switch first {
        case UInt8(ascii: "\""):
            let start = position
            position &+= 1
            while position < bytes.count {
                let byte = bytes[position]
                position &+= 1
                if byte == UInt8(ascii: "\"") { return true }
                guard byte >= 0x20, byte != UInt8(ascii: "\\") else { break }
            }
            position = start
            return false
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        default: return integer() != nil
        }
    }

    /// Whether the 8 bytes of `word` (little-endian) are all ASCII digits: each one's high nibble is 3, also after
    /// adding 6 (a carry out of a byte only comes from one that is no digit, and fails that byte anyway).
    @inlinable
    static func allDigits(_ word: UInt64) -> Bool {
        let high: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
        return (word & high) | (((word &+ 0x0606_0606_0606_0606) & high) >> 4) == 0x3333_3333_3333_3333
    }

    /// The number 8 ASCII digits (little-endian, the first digit in the lowest byte) spell: pairs, then fours, then
    /// the eight, by multiplications that keep each step's partial sums in separate bytes.
    @inlinable
    static func eightDigits(_ word: UInt64) -> UInt64 {
        var value = word & 0x0F0F_0F0F_0F0F_0F0F
        value = (value &* 10) &+ (value >> 8)  // every other byte: two digits
        let pairs: UInt64 = 0x0000_00FF_0000_00FF
        let high: UInt64 = 100 + (1_000_000 << 32)
        let low: UInt64 = 1 + (10_000 << 32)
        return ((value & pairs) &* high &+ ((value >> 16) & pairs) &* low) >> 32
    }
}
