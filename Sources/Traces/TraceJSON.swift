/// The JSON subset a trace line uses, parsed and written without Foundation: one object per line whose values are
/// strings, integers, numbers, booleans, null, arrays and (ignored, for later versions) nested objects.
///
/// The parser works on the bytes of one line, bounds-checks every step, limits nesting, and names the byte offset
/// of anything it cannot read.
enum JSONValue: Hashable, Sendable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([JSONField])
}

struct JSONField: Hashable, Sendable {
    var key: String
    var value: JSONValue
}

/// Why a line is not the JSON a trace holds: the byte offset (0-based) in the line and what was wrong.
public struct TraceSyntaxError: Error, Hashable, Sendable {
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }
}

struct JSONLineParser {
    static let maximumDepth = 16

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Parses one object (surrounding white space allowed, nothing else after it).
    static func object(_ line: UnsafeBufferPointer<UInt8>) throws(TraceSyntaxError) -> [JSONField] {
        var parser = JSONLineParser(line)
        parser.skipSpace()
        guard parser.peek() == UInt8(ascii: "{") else { throw parser.error("expected '{' at the start of the line") }
        let fields = try parser.parseObject(depth: 0)
        parser.skipSpace()
        guard parser.index == line.count else { throw parser.error("unexpected text after the object") }
        return fields
    }

    static func object(_ line: [UInt8]) throws(TraceSyntaxError) -> [JSONField] {
        try line.withUnsafeBufferPointer { (buffer) throws(TraceSyntaxError) in try object(buffer) }
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func error(_ reason: String) -> TraceSyntaxError { TraceSyntaxError(offset: index, reason: reason) }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(TraceSyntaxError) {
        skipSpace()
        guard peek() == byte else {
            throw error(index < bytes.count ? "expected \(what)" : "line ends where \(what) was expected")
        }
        index += 1
    }

    private mutating func parseObject(depth: Int) throws(TraceSyntaxError) -> [JSONField] {
        guard depth < Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels") }
        try expect(UInt8(ascii: "{"), "'{'")
        var fields: [JSONField] = []
        skipSpace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return fields
        }
        while true {
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in double quotes") }
            let key = try parseString()
            try expect(UInt8(ascii: ":"), "':' after the key")
            let value = try parseValue(depth: depth)
            fields.append(JSONField(key: key, value: value))
            skipSpace()
            guard let next = peek() else { throw error("line ends inside an object") }
            index += 1
            if next == UInt8(ascii: "}") { return fields }
            guard next == UInt8(ascii: ",") else {
                index -= 1
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(TraceSyntaxError) -> JSONValue {
        skipSpace()
        guard let first = peek() else { throw error("line ends where a value was expected") }
        switch first {
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "{"):
            return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["):
            guard depth + 1 < Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels") }
            index += 1
            var elements: [JSONValue] = []
            skipSpace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                elements.append(try parseValue(depth: depth + 1))
                skipSpace()
                guard let next = peek() else { throw error("line ends inside an array") }
                index += 1
                if next == UInt8(ascii: "]") { return .array(elements) }
                guard next == UInt8(ascii: ",") else {
                    index -= 1
                    throw error("expected ',' or ']'")
                }
            }
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw error("unexpected character where a value was expected")
        }
    }

    private mutating func literal(_ word: StaticString) throws(TraceSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw error("unknown literal") }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { throw error("unknown literal") }
        index += count
    }

    private mutating func parseNumber() throws(TraceSyntaxError) -> JSONValue {
        let start = index
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var magnitude: UInt64 = 0
        var digits = 0
        var overflow = false
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            overflow = overflow || o1 || o2
            magnitude = plus
            digits += 1
            index += 1
        }
        guard digits > 0 else { throw error("a number needs digits") }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            var fraction = 0
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                index += 1
                fraction += 1
            }
            guard fraction > 0 else { throw error("a fraction needs digits") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            var exponent = 0
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                index += 1
                exponent += 1
            }
            guard exponent > 0 else { throw error("an exponent needs digits") }
        }
        if isInteger, !overflow {
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
            if !negative, magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text) else {
            index = start
            throw error("not a number")
        }
        return .number(value)
    }

    private mutating func parseString() throws(TraceSyntaxError) -> String {
        index += 1  // the opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw error("control character inside a string") }
            index += 1
        }
        var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            guard byte >= 0x20 else { throw error("control character inside a string") }
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            index += 1
            guard let escaped = peek() else { break }
            index += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    // A surrogate pair: the low half must follow.
                    guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate in \\u escape") }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                out.append(contentsOf: String(Character(unicode)).utf8)
            default:
                index -= 1
                throw error("unknown escape in a string")
            }
        }
        throw error("line ends inside a string")
    }

    private mutating func hex4() throws(TraceSyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let nibble: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("bad hex digit in \\u escape")
            }
            value = value << 4 | nibble
            index += 1
        }
        return value
    }
}

/// Writes one JSON object as one line, in the order fields are added.
struct JSONLineWriter {
    private(set) var bytes: [UInt8] = []
    private var first = true

    init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ key: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(key)
        appendQuoted(value)
    }

    mutating func integer<Value: BinaryInteger>(_ key: StaticString, _ value: Value?) {
        guard let value else { return }
        self.key(key)
        appendInteger(Int64(value))
    }

    mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    mutating func strings(_ key: StaticString, _ values: [String]) {
        self.key(key)
        bytes.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            appendQuoted(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A string of lower-case hex digits.
    mutating func hex(_ key: StaticString, _ value: [UInt8]) {
        self.key(key)
        bytes.append(UInt8(ascii: "\""))
        for byte in value {
            bytes.append(Self.digits[Int(byte >> 4)])
            bytes.append(Self.digits[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The finished line, with its newline.
    mutating func line() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: enough for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &scratch) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for position in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[position]) }
        }
    }

    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(Self.digits[Int(byte >> 4)])
                bytes.append(Self.digits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
