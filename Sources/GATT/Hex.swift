/// Hex text <-> bytes, for the command line, trace files and test vectors.
public enum Hex {
    /// Why a hex string could not be read.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// Character offset (0-based) of the problem in the text.
        public var offset: Int
        public var reason: String
        public var description: String { "invalid hex at character \(offset + 1): \(reason)" }
    }

    /// Parses `163c1104`, `16 3c 11 04`, `16:3c:11:04`, `0x163C1104` or `16-3c`; separators may appear between
    /// bytes, never inside one. An empty string (or one of separators only) is zero bytes.
    public static func bytes(_ text: String) throws(ParseError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var pending: UInt8?
        var pendingOffset = 0
        var scalars = Array(text.unicodeScalars)
        var skip = 0
        if scalars.count >= 2, scalars[0] == "0", scalars[1] == "x" || scalars[1] == "X" {
            skip = 2
            scalars.removeFirst(2)
        }
        for (index, scalar) in scalars.enumerated() {
            let offset = index + skip
            if scalar.isASCII, UInt8(scalar.value).isHexDigit {
                let nibble = UInt8(scalar.value).hexValue
                if let high = pending {
                    bytes.append(high << 4 | nibble)
                    pending = nil
                } else {
                    pending = nibble
                    pendingOffset = offset
                }
            } else if scalar == " " || scalar == ":" || scalar == "-" || scalar == "\t" || scalar == "," {
                guard pending == nil else {
                    throw ParseError(
                        offset: offset, reason: "separator inside a byte (odd digit at character \(pendingOffset + 1))")
                }
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
