internal import GATT
internal import Support

/// The reader's fast path for the lines a trace is mostly made of: `notification`, `indication` and `read` values.
///
/// One pass over the line's bytes (Support's ``JSONScanner``, the JSON reader's fast path), no intermediate JSON
/// values. It recognises the keys the writer emits, in any order and with any white space, and skips unknown keys
/// whose values are plain strings, integers or booleans.
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
        guard line.count <= JSONLimits.traceLine.maximumLength else { return nil }
        var scanner = JSONScanner(line)
        return decode(&scanner)
    }

    private mutating func decode(_ scanner: inout JSONScanner) -> TraceValue? {
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
                guard kind == nil, let text = scanner.rawString(), let parsed = Self.kind(text) else { return nil }
                kind = parsed
            case .sensor:
                guard address == nil, let text = scanner.rawString(), let parsed = intern(text) else { return nil }
                address = parsed
            case .uuid:
                guard characteristic == nil, let text = scanner.rawString(), let parsed = Self.uuid(text) else {
                    return nil
                }
                characteristic = parsed
            case .value:
                guard bytes == nil, let text = scanner.rawString(), let parsed = Self.hex(text) else { return nil }
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
        guard scanner.atEnd, let kind, let address, let characteristic, let bytes, let monotonic, let wall,
            TraceLineCodec.wallMicroseconds.contains(wall)
        else {
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

extension JSONScanner {
    /// One of the keys the writer writes, recognised by its bytes and closing quote (read 8 at a time); `nil` for
    /// other keys, and when the line is too short to read 8 bytes after the opening quote.
    fileprivate mutating func writerKey() -> ValueLineDecoder.Key? {
        guard peek() == UInt8(ascii: "\""), let word = word(at: 1) else { return nil }
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
        skip(1 + length)
        return key
    }
}
