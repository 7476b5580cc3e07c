/// Writes compact JSON (no white space) into bytes, in the order values are added: the one writer behind GATT's
/// decoded fields, the trace format's lines (docs/trace-format.md) and the stores' metadata text.
///
/// Commas go in by themselves: after a value or the end of an array or object, the next key or value gets one.
/// Strings are escaped one way everywhere: `\"`, `\\`, `\n`, `\r` and `\t`, other control characters as `\u00xx`
/// (lower-case hex), everything else as its UTF-8 (so a string never needs a surrogate pair). Integers are written
/// in decimal, doubles in the shortest form that reads back to the same bits (`5.0`, `0.1`, `1e-07`); a double that
/// is not finite has no JSON form and is written as `null`.
///
/// ```swift
/// var json = JSONWriter()
/// json.beginObject()
/// json.key("heart_rate")
/// json.integer(60)
/// json.endObject()
/// json.text   // {"heart_rate":60}
/// ```
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Whether the next key or value follows another one at the same level.
    private var separate = false

    public init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    /// What was written, as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Structure

    public mutating func beginObject() {
        comma()
        bytes.append(UInt8(ascii: "{"))
        separate = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        separate = true
    }

    public mutating func beginArray() {
        comma()
        bytes.append(UInt8(ascii: "["))
        separate = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        separate = true
    }

    /// A member's key and its colon; the member's value comes next.
    public mutating func key(_ key: String) {
        comma()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        separate = false
    }

    /// A key known when the program was written (escaped like any other).
    public mutating func key(_ key: StaticString) {
        comma()
        key.withUTF8Buffer { appendQuoted($0) }
        bytes.append(UInt8(ascii: ":"))
        separate = false
    }

    /// Ends a document of JSON Lines (one value a line): a newline, after which a new value begins.
    public mutating func endLine() {
        bytes.append(UInt8(ascii: "\n"))
        separate = false
    }

    // MARK: Values

    public mutating func null() {
        comma()
        append("null")
        separate = true
    }

    public mutating func bool(_ value: Bool) {
        comma()
        append(value ? "true" : "false")
        separate = true
    }

    public mutating func integer(_ value: Int64) {
        comma()
        appendDecimal(value)
        separate = true
    }

    /// The shortest text that reads back to the same double; `null` when it is not finite.
    public mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        comma()
        bytes.append(contentsOf: value.description.utf8)
        separate = true
    }

    public mutating func string(_ value: String) {
        comma()
        appendQuoted(value)
        separate = true
    }

    /// A string of lower-case hex digits, two a byte.
    public mutating func hex(_ value: [UInt8]) {
        comma()
        bytes.reserveCapacity(bytes.count + 2 * value.count + 2)
        bytes.append(UInt8(ascii: "\""))
        for byte in value {
            bytes.append(Self.digits[Int(byte >> 4)])
            bytes.append(Self.digits[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
        separate = true
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .integer(let number): integer(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let fields):
            beginObject()
            for field in fields {
                key(field.key)
                self.value(field.value)
            }
            endObject()
        }
    }

    // MARK: Bytes

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func comma() {
        if separate { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func appendDecimal(_ value: Int64) {
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
        var value = value
        value.withUTF8 { appendQuoted($0) }
    }

    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole.
        if !utf8.contains(where: Self.needsEscape) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): append(#"\""#)
                case UInt8(ascii: "\\"): append(#"\\"#)
                case UInt8(ascii: "\n"): append(#"\n"#)
                case UInt8(ascii: "\r"): append(#"\r"#)
                case UInt8(ascii: "\t"): append(#"\t"#)
                case 0..<0x20:
                    append(#"\u00"#)
                    bytes.append(Self.digits[Int(byte >> 4)])
                    bytes.append(Self.digits[Int(byte & 0x0F)])
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
