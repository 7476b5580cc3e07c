/// A Bluetooth UUID, stored as its canonical 128-bit value.
///
/// 16- and 32-bit UUIDs are shorthands for `0000xxxx-0000-1000-8000-00805f9b34fb` (the Bluetooth Base UUID),
/// so `BluetoothUUID("2a37")` and `BluetoothUUID("00002a37-0000-1000-8000-00805f9b34fb")` are the same value:
/// they compare and hash equal. Parse a string once, where it enters (D-Bus, the command line, a trace file).
///
/// ```swift
/// let uuid = BluetoothUUID("00002A37-0000-1000-8000-00805F9B34FB")
/// uuid == .heartRateMeasurement   // true
/// uuid.description                // "00002a37-0000-1000-8000-00805f9b34fb" (BlueZ's form)
/// uuid.shortDescription           // "2a37"
/// ```
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The most significant 64 bits.
    public let high: UInt64
    /// The least significant 64 bits.
    public let low: UInt64

    /// The low 64 bits of the Bluetooth Base UUID, `-8000-00805f9b34fb`.
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The high 64 bits of the Bluetooth Base UUID with the 32-bit value zeroed, `0000xxxx-0000-1000`.
    static let baseHigh: UInt64 = 0x0000_0000_0000_1000

    /// A UUID from its two 64-bit halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The 128-bit form of a 16-bit SIG-assigned UUID.
    public init(_ short: UInt16) {
        self.init(UInt32(short))
    }

    /// The 128-bit form of a 32-bit SIG-assigned UUID.
    public init(_ value: UInt32) {
        self.init(high: UInt64(value) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// Parses `2a37`, `0x2A37`, `00002a37`, the 36-character form with dashes, or 32 hex digits without them.
    ///
    /// Returns `nil` for anything else; case does not matter.
    public init?(_ text: some StringProtocol) {
        var digits = Substring(text)
        let prefixed = digits.hasPrefix("0x") || digits.hasPrefix("0X")
        if prefixed { digits = digits.dropFirst(2) }
        if prefixed, digits.utf8.count != 4, digits.utf8.count != 8 { return nil }  // 0x only on short forms
        switch digits.utf8.count {
        case 4, 8:
            guard let value = UInt32(digits, radix: 16), digits.utf8.allSatisfy(\.isHexDigit) else { return nil }
            self.init(value)
        case 32, 36:
            if digits.utf8.count == 36 {
                // Dashes exactly at 8-4-4-4-12.
                let dashes = digits.utf8.enumerated().filter { $0.element == UInt8(ascii: "-") }.map(\.offset)
                guard dashes == [8, 13, 18, 23] else { return nil }
            }
            let hex = digits.utf8.filter { $0 != UInt8(ascii: "-") }
            guard hex.count == 32, hex.allSatisfy(\.isHexDigit) else { return nil }
            var high: UInt64 = 0
            var low: UInt64 = 0
            for (index, character) in hex.enumerated() {
                let nibble = UInt64(character.hexValue)
                if index < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
            }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// The 16-bit short form, when this UUID is a 16-bit SIG-assigned one.
    public var shortValue: UInt16? {
        guard let value = value32, value <= UInt32(UInt16.max) else { return nil }
        return UInt16(value)
    }

    /// The 32-bit short form, when this UUID is built on the Bluetooth Base UUID.
    public var value32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The canonical form BlueZ uses: 36 lower-case characters with dashes.
    public var description: String {
        let hex = Self.hex(high, digits: 16) + Self.hex(low, digits: 16)
        var out = ""
        out.reserveCapacity(36)
        for (index, character) in hex.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { out.append("-") }
            out.append(character)
        }
        return out
    }

    /// `2a37` for 16-bit UUIDs, `0000fee0`-style 8 digits for 32-bit ones, the canonical form otherwise.
    public var shortDescription: String {
        if let short = shortValue { return Self.hex(UInt64(short), digits: 4) }
        if let value = value32 { return Self.hex(UInt64(value), digits: 8) }
        return description
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.utf8.count)) + text
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    /// The value of an ASCII hex digit; call only after `isHexDigit`.
    var hexValue: UInt8 {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x41...0x46: self - 0x41 + 10
        default: self &- 0x61 &+ 10
        }
    }
}
