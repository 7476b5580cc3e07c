/// Hex text <-> bytes, for the command line, trace files and test vectors.
public enum Hex {
    /// Why a hex string could not be read.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// Character offset (0-based) of the problem in the text.
        public var offset: Int
        public var reason: String
        public var description: String { "invalid hex at character \(offset + 1): \(reason)" }
    }

    /// Parses `163c1104`, `16 3c 11 04`, `16:3c:11:04`, `0x163C1104`, `0x16, 0x3c` or `16-3c`; separators may
    /// appear between bytes, never inside one, and each separated group may start with `0x`. An empty string
    /// (or one of separators only) is zero bytes.
    public static func bytes(_ text: String) throws(ParseError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var pending: UInt8?
        var pendingOffset = 0
        var atGroupStart = true
        var pendingStartsGroup = false
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if scalar.isASCII, UInt8(scalar.value).isHexDigit {
                let nibble = UInt8(scalar.value).hexValue
                if let high = pending {
                    bytes.append(high << 4 | nibble)
                    pending = nil
                } else {
                    pending = nibble
                    pendingOffset = offset
                    pendingStartsGroup = atGroupStart
                }
                atGroupStart = false
            } else if scalar == "x" || scalar == "X", pending == 0, pendingStartsGroup {
                pending = nil  // the "0x" in front of a group
            } else if scalar == " " || scalar == ":" || scalar == "-" || scalar == "\t" || scalar == "," {
                guard pending == nil else {
                    throw ParseError(
                        offset: offset, reason: "separator inside a byte (odd digit at character \(pendingOffset + 1))")
                }
                atGroupStart = true
            } else {
                throw ParseError(offset: offset, reason: "'\(scalar)' is not a hex digit")
            }
        }
        guard pending == nil else {
            throw ParseError(offset: pendingOffset, reason: "odd number of hex digits")
        }
        return bytes
    }

    /// Lower-case hex, no separators.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
