internal import GATT

/// The reader's fast path for the lines a trace is mostly made of: `notification`, `indication` and `read` values.
///
/// One pass over the line's bytes, no intermediate JSON values. It recognises the keys the writer emits, in any
/// order and with any white space, and skips unknown keys whose values are plain strings, integers or booleans.
/// Anything else (an escape, `null`, a duplicate key, a number with a fraction, a nested value, a field that is
/// missing or not in the writer's form) makes it return `nil`, and the line goes to ``TraceLineCodec``, the one
/// that defines the format and words its errors. So when this returns a value, it is the value the general
/// decoder returns for that line; otherwise it has decided nothing.
///
/// Addresses are interned: the last few distinct ones are kept with their raw bytes, so a line naming a known
/// sensor costs no string allocation. Characteristic UUIDs are parsed in place (a ``BluetoothUUID`` is two
/// integers, nothing to allocate).
///
/// ```swift
/// var fast = ValueLineDecoder()
/// let value = line.withUnsafeBufferPointer { fast.decode($0) }   // nil: ask TraceLineCodec.decode(line)
/// ```
struct ValueLineDecoder {
    /// An address as it appears in lines: its 17 bytes, packed.
    private struct RawAddress: Equatable {
        var head: UInt64
        var middle: UInt64
        var last: UInt8
    }

    /// How many distinct addresses are remembered; a trace with more sensors than this still decodes, it only
    /// allocates more often.
    static let addressCapacity = 32

    /// The addresses seen lately as they appear in lines, and (at the same index) as records carry them, in upper
    /// case. Two arrays, so that the search compares plain integers and touches no reference count.
    private var rawAddresses: [RawAddress] = []
    private var addresses: [String] = []
    /// Where the next address not in ``addresses`` goes once it is full (round robin).
    private var nextSlot = 0

    init() {
        rawAddresses.reserveCapacity(Self.addressCapacity)
        addresses.reserveCapacity(Self.addressCapacity)
    }

    /// The value on `line` (without its newline), or `nil` when the line is anything else or anything unusual.
    mutating func decode(_ line: UnsafeBufferPointer<UInt8>) -> TraceValue? {
        guard let base = line.baseAddress else { return nil }
        var scanner = Scanner(base: base, end: line.count)
        return decode(&scanner)
    }

    private mutating func decode(_ scanner: inout Scanner) -> TraceValue? {
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        var kind: TraceValue.Kind?
        var address: String?
        var characteristic: BluetoothUUID?
        var bytes: [UInt8]?
        var monotonic: Int64?
        var wall: Int64?
        while true {
            scanner.skipSpace()
            guard let key = scanner.writerKey() ?? scanner.plainString().map(Key.init) else { return nil }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            scanner.skipSpace()
            switch key {
            case .kind:
                guard kind == nil, let text = scanner.quoted(), let parsed = Self.kind(text) else { return nil }
                kind = parsed
            case .sensor:
                guard address == nil, let text = scanner.quoted(), let parsed = intern(text) else { return nil }
                address = parsed
            case .uuid:
                guard characteristic == nil, let text = scanner.quoted(), let parsed = Self.uuid(text) else {
                    return nil
                }
                characteristic = parsed
            case .value:
                guard bytes == nil, let text = scanner.quoted(), let parsed = Self.hex(text) else { return nil }
                bytes = parsed
            case .monotonic:
                guard monotonic == nil, let number = scanner.integer() else { return nil }
                monotonic = number
            case .wall:
                guard wall == nil, let number = scanner.integer() else { return nil }
                wall = number
            case .header:
                return nil
            case .other:
                guard scanner.skipPlainValue() else { return nil }
            }
            scanner.skipSpace()
            if scanner.take(UInt8(ascii: ",")) { continue }
            guard scanner.take(UInt8(ascii: "}")) else { return nil }
            break
        }
        scanner.skipSpace()
        guard scanner.atEnd, let kind, let address, let characteristic, let bytes, let monotonic, let wall else {
            return nil
        }
        return TraceValue(
            kind: kind, upperCaseAddress: address, characteristic: characteristic, bytes: bytes,
            at: Timestamp(monotonic: .nanoseconds(monotonic), wallMicroseconds: wall))
    }

    // MARK: Fields

    /// The keys that matter on a value line, recognised by their bytes.
    fileprivate enum Key {
        case kind, sensor, uuid, value, monotonic, wall
        /// `wearhouse-trace`: the line is a header, whatever else it says.
        case header
        case other

        init(_ key: UnsafeBufferPointer<UInt8>) {
            switch key.count {
            case 4:
                if Self.equal(key, "kind") {
                    self = .kind
                } else if Self.equal(key, "uuid") {
                    self = .uuid
                } else {
                    self = .other
                }
            case 5: self = Self.equal(key, "value") ? .value : .other
            case 6: self = Self.equal(key, "sensor") ? .sensor : .other
            case 7:
                if Self.equal(key, "mono-ns") {
                    self = .monotonic
                } else if Self.equal(key, "wall-us") {
                    self = .wall
                } else {
                    self = .other
                }
            case 15: self = Self.equal(key, "wearhouse-trace") ? .header : .other
            default: self = .other
            }
        }

        static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
            text.withUTF8Buffer { expected in
                expected.count == bytes.count && memoryEqual(bytes.baseAddress, expected.baseAddress, bytes.count)
            }
        }
    }

    private static func kind(_ text: UnsafeBufferPointer<UInt8>) -> TraceValue.Kind? {
        if Key.equal(text, "notification") { return .notification }
        if Key.equal(text, "indication") { return .indication }
        if Key.equal(text, "read") { return .read }
        return nil
    }

    /// The upper-case address for `text` (`AA:BB:CC:DD:EE:FF`, either case), from the interned ones when seen
    /// lately.
    private mutating func intern(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        guard text.count == 17, let start = text.baseAddress else { return nil }
        let bytes = UnsafeRawPointer(start)
        let raw = RawAddress(
            head: bytes.loadUnaligned(as: UInt64.self), middle: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            last: text[16])
        let found = rawAddresses.withUnsafeBufferPointer { known in
            known.indices.first {
                known[$0].head == raw.head && known[$0].middle == raw.middle && known[$0].last == raw.last
            }
        }
        if let found { return addresses[found] }
        for (position, byte) in text.enumerated() {
            if position % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { return nil }
            } else {
                guard Self.nibble(byte) != nil else { return nil }
            }
        }
        let upper = String(unsafeUninitializedCapacity: 17) { output in
            for (position, byte) in text.enumerated() {
                output[position] = byte >= UInt8(ascii: "a") ? byte - 0x20 : byte
            }
            return 17
        }
        if addresses.count < Self.addressCapacity {
            rawAddresses.append(raw)
            addresses.append(upper)
        } else {
            rawAddresses[nextSlot] = raw
            addresses[nextSlot] = upper
            nextSlot = (nextSlot + 1) % Self.addressCapacity
        }
        return upper
    }

    /// `2a37`, `0000fee0`, 32 hex digits or the 36-character form; `nil` for the others (`0x2a37`), which
    /// ``BluetoothUUID`` also reads, and for anything that is no UUID.
    static func uuid(_ text: UnsafeBufferPointer<UInt8>) -> BluetoothUUID? {
        switch text.count {
        case 4, 8:
            var value: UInt32 = 0
            for byte in text {
                guard let nibble = nibble(byte) else { return nil }
                value = value << 4 | UInt32(nibble)
            }
            return BluetoothUUID(value)
        case 32, 36:
            var high: UInt64 = 0
            var low: UInt64 = 0
            var digits = 0
            for (position, byte) in text.enumerated() {
                if text.count == 36, position == 8 || position == 13 || position == 18 || position == 23 {
                    guard byte == UInt8(ascii: "-") else { return nil }
                    continue
                }
                guard let nibble = nibble(byte) else { return nil }
                if digits < 16 {
                    high = high << 4 | UInt64(nibble)
                } else {
                    low = low << 4 | UInt64(nibble)
                }
                digits += 1
            }
            return BluetoothUUID(high: high, low: low)
        default:
            return nil
        }
    }

    /// Bytes from hex digits without separators (either case); `nil` for anything else, which ``Hex`` may still
    /// read or refuse.
    static func hex(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        let count = text.count / 2
        var invalid: UInt8 = 0
        // Appending to a reserved array: unlike `init(unsafeUninitializedCapacity:)`, it allocates without looking up
        // the array's generic metadata at run time.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        hexValues.withUnsafeBufferPointer { values in
            for index in 0..<count {
                let high = values[Int(text[2 * index])]
                let low = values[Int(text[2 * index + 1])]
                invalid |= high | low
                bytes.append(high << 4 | low)
            }
        }
        return invalid & 0xF0 == 0 ? bytes : nil
    }

    /// Every byte's value as a hex digit, 0xFF for those that are not one.
    private static let hexValues: [UInt8] = (0...255).map { nibble(UInt8($0)) ?? 0xFF }

    static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// `count` bytes at `a` and `b` are the same.
private func memoryEqual(_ a: UnsafePointer<UInt8>?, _ b: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
    guard count > 0 else { return true }
    guard let a, let b else { return false }
    for index in 0..<count where a[index] != b[index] { return false }
    return true
}

/// A position in one line; every step checks the end, none throws.
private struct Scanner {
    let base: UnsafePointer<UInt8>
    let end: Int
    var index = 0

    init(base: UnsafePointer<UInt8>, end: Int) {
        self.base = base
        self.end = end
    }

    var atEnd: Bool { index == end }

    mutating func skipSpace() {
        while index < end {
            switch base[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): index += 1
            default: return
            }
        }
    }

    /// Consumes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard index < end, base[index] == byte else { return false }
        index += 1
        return true
    }

    /// The bytes between double quotes, when there are no escapes, control characters or non-ASCII bytes in
    /// them (every string the fast path reads is ASCII; those that are not go to the general parser).
    mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < end {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return UnsafeBufferPointer(start: base + start, count: index - 1 - start)
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// One of the keys the writer writes, recognised by its bytes and closing quote (read 8 at a time); `nil` for
    /// other keys, and when the line is too short to read 8 bytes after the opening quote.
    mutating func writerKey() -> ValueLineDecoder.Key? {
        guard end - index > 8, base[index] == UInt8(ascii: "\"") else { return nil }
        let word = UInt64(littleEndian: UnsafeRawPointer(base + index + 1).loadUnaligned(as: UInt64.self))
        let key: ValueLineDecoder.Key
        let length: Int
        // The key's bytes and its closing quote, little-endian, e.g. `kind"` is 0x22_64_6E_69_6B.
        if word & 0xFF_FFFF_FFFF == 0x22_646E_696B {
            (key, length) = (.kind, 5)
        } else if word & 0xFF_FFFF_FFFF == 0x22_6469_7575 {
            (key, length) = (.uuid, 5)
        } else if word & 0xFFFF_FFFF_FFFF == 0x2265_756C_6176 {
            (key, length) = (.value, 6)
        } else if word & 0xFF_FFFF_FFFF_FFFF == 0x22_726F_736E_6573 {
            (key, length) = (.sensor, 7)
        } else if word == 0x2273_6E2D_6F6E_6F6D {
            (key, length) = (.monotonic, 8)
        } else if word == 0x2273_752D_6C6C_6177 {
            (key, length) = (.wall, 8)
        } else {
            return nil
        }
        index += 1 + length
        return key
    }

    /// The bytes up to the next double quote, unchecked: for fields whose parser accepts only a few ASCII
    /// characters, none of them a backslash or a control character (so an escape or anything the general parser
    /// refuses in a string fails there).
    mutating func quoted() -> UnsafeBufferPointer<UInt8>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < end {
            if base[index] == UInt8(ascii: "\"") {
                index += 1
                return UnsafeBufferPointer(start: base + start, count: index - 1 - start)
            }
            index += 1
        }
        return nil
    }

    /// An integer without fraction or exponent that fits an `Int64`.
    mutating func integer() -> Int64? {
        let negative = take(UInt8(ascii: "-"))
        var magnitude: UInt64 = 0
        let start = index
        while end - index >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            guard Self.allDigits(word) else { break }
            magnitude = magnitude &* 100_000_000 &+ Self.eightDigits(word)
            index += 8
        }
        while index < end {
            let digit = base[index] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            magnitude = magnitude &* 10 &+ UInt64(digit)
            index += 1
        }
        // 19 digits cannot overflow a UInt64; longer numbers (even with leading zeros) are left to the general parser.
        guard index > start, index - start <= 19 else { return nil }
        if index < end {
            switch base[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// Whether the 8 bytes of `word` (little-endian) are all ASCII digits: each one's high nibble is 3, also after
    /// adding 6 (a carry out of a byte only comes from one that is no digit, and fails that byte anyway).
    static func allDigits(_ word: UInt64) -> Bool {
        let high: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
        return (word & high) | (((word &+ 0x0606_0606_0606_0606) & high) >> 4) == 0x3333_3333_3333_3333
    }

    /// The number 8 ASCII digits (little-endian, the first digit in the lowest byte) spell: pairs, then fours,
    /// then the eight, by multiplications that keep each step's partial sums in separate bytes.
    static func eightDigits(_ word: UInt64) -> UInt64 {
        var value = word & 0x0F0F_0F0F_0F0F_0F0F
        value = (value &* 10) &+ (value >> 8)  // every other byte: two digits
        let pairs: UInt64 = 0x0000_00FF_0000_00FF
        return ((value & pairs) &* (100 + (1_000_000 << 32)) &+ ((value >> 16) & pairs) &* (1 + (10_000 << 32)))
            >> 32
    }

    /// Skips the value of a key the fast path ignores, when it is a plain string, an integer, `true` or `false`.
    mutating func skipPlainValue() -> Bool {
        guard index < end else { return false }
        switch base[index] {
        case UInt8(ascii: "\""):
            // Ignored strings may hold any UTF-8 (or bytes the general parser would repair): only escapes and
            // control characters need it.
            index += 1
            while index < end {
                let byte = base[index]
                index += 1
                if byte == UInt8(ascii: "\"") { return true }
                guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return false }
            }
            return false
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        default: return integer() != nil
        }
    }

    private mutating func word(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard end - index >= count else { return false }
        let matches = text.withUTF8Buffer { memoryEqual(base + index, $0.baseAddress, count) }
        if matches { index += count }
        return matches
    }
}
