import Foundation
public import Health

/// Metadata as stored: a JSON object whose values are tagged by type, so a number stays a number and a date a
/// date: `{"heartRateSensorLocation": {"number": 1}, "timeZone": {"string": "Europe/Berlin"}}`.
/// Shared by the engines, so that both store the same text.
public enum MetadataCoding {
    /// The stored text: keys sorted, each value an object tagged by its type. Written by hand rather than through
    /// `JSONSerialization` (whose boxing into `Any` cost tens of microseconds a dictionary, paid for every stream of
    /// a batch). `nil` for no metadata, or when a number is not finite (JSON has no such numbers).
    public static func encode(_ metadata: [String: MetadataValue]) -> String? {
        guard !metadata.isEmpty else { return nil }
        var out = "{"
        out.reserveCapacity(32 * metadata.count)
        for (position, key) in metadata.keys.sorted().enumerated() {
            if position > 0 { out += "," }
            appendString(key, to: &out)
            out += ":{"
            switch metadata[key]! {
            case .string(let text):
                out += "\"string\":"
                appendString(text, to: &out)
            case .number(let number):
                guard number.isFinite else { return nil }
                out += "\"number\":"
                appendNumber(number, to: &out)
            case .bool(let flag):
                out += flag ? "\"bool\":true" : "\"bool\":false"
            case .date(let instant):
                out += "\"date\":\(instant.milliseconds)"
            case .quantity(let number, let unit):
                guard number.isFinite else { return nil }
                out += "\"quantity\":"
                appendNumber(number, to: &out)
                out += ",\"unit\":"
                appendString(unit, to: &out)
            }
            out += "}"
        }
        out += "}"
        return out
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    private static func appendString(_ text: String, to out: inout String) {
        // Most keys and values need no escape: copied whole.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out += "\""
            out += text
            out += "\""
            return
        }
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// A number as JSON: whole numbers without a fraction (as `JSONSerialization` writes them), others in the
    /// shortest form that reads back to the same double.
    private static func appendNumber(_ number: Double, to out: inout String) {
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992 {
            out += String(Int64(number))
        } else {
            out += "\(number)"
        }
    }

    /// The metadata of stored text. Text of the shape ``encode(_:)`` writes is read directly (numbers exactly, by
    /// the standard library's parser); anything else goes through `JSONSerialization`.
    public static func decode(_ text: String?) -> [String: MetadataValue] {
        guard let text else { return [:] }
        let direct = Array(text.utf8).withUnsafeBufferPointer { bytes in
            var reader = TaggedObjectReader(bytes: bytes)
            return reader.read()
        }
        return direct ?? decodeAny(text)
    }

    private static func decodeAny(_ text: String) -> [String: MetadataValue] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return [:]
        }
        var metadata: [String: MetadataValue] = [:]
        for (key, raw) in object {
            guard let tagged = raw as? [String: Any] else { continue }
            if let text = tagged["string"] as? String {
                metadata[key] = .string(text)
            } else if let flag = tagged["bool"] as? Bool {  // only booleans are written under "bool"
                metadata[key] = .bool(flag)
            } else if let milliseconds = tagged["date"] as? NSNumber {
                metadata[key] = .date(Instant(milliseconds: milliseconds.int64Value))
            } else if let number = tagged["quantity"] as? NSNumber, let unit = tagged["unit"] as? String {
                metadata[key] = .quantity(number.doubleValue, unit: unit)
            } else if let number = tagged["number"] as? NSNumber {
                metadata[key] = .number(number.doubleValue)
            }
        }
        return metadata
    }
}

/// Reads `{"key":{"tag":value,...},...}` with string, number and boolean values; `nil` for anything else.
private struct TaggedObjectReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    enum Scalar {
        case string(String)
        case number(Double, integer: Int64?)
        case bool(Bool)
    }

    mutating func read() -> [String: MetadataValue]? {
        var metadata: [String: MetadataValue] = [:]
        guard consume(UInt8(ascii: "{")) else { return nil }
        if consume(UInt8(ascii: "}")) { return atEnd() ? metadata : nil }
        repeat {
            guard let key = string(), consume(UInt8(ascii: ":")), consume(UInt8(ascii: "{")) else { return nil }
            var fields: [String: Scalar] = [:]
            if !consume(UInt8(ascii: "}")) {
                repeat {
                    guard let tag = string(), consume(UInt8(ascii: ":")), let value = scalar() else { return nil }
                    fields[tag] = value
                } while consume(UInt8(ascii: ","))
                guard consume(UInt8(ascii: "}")) else { return nil }
            }
            // The tags the writer uses, read with the rules of the general decoder.
            if case .string(let text)? = fields["string"] {
                metadata[key] = .string(text)
            } else if case .bool(let flag)? = fields["bool"] {
                metadata[key] = .bool(flag)
            } else if let date = fields["date"] {
                guard case .number(let number, let integer) = date else { return nil }
                guard let milliseconds = integer ?? Int64(exactly: number.rounded(.towardZero)) else { return nil }
                metadata[key] = .date(Instant(milliseconds: milliseconds))
            } else if case .number(let number, _)? = fields["quantity"], case .string(let unit)? = fields["unit"] {
                metadata[key] = .quantity(number, unit: unit)
            } else if case .number(let number, _)? = fields["number"] {
                metadata[key] = .number(number)
            } else if !fields.isEmpty {
                return nil  // some other shape: leave it to the general decoder
            }
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "}")), atEnd() else { return nil }
        return metadata
    }

    mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func atEnd() -> Bool {
        skipSpace()
        return index == bytes.count
    }

    /// A string without escapes other than the simple ones (`\uXXXX` outside the BMP makes it `nil`).
    mutating func string() -> String? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        var start = index
        var decoded: [UInt8] = []  // what came before the last escape, unescaped
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                decoded += bytes[start..<index]
                index += 1
                return String(decoding: decoded, as: UTF8.self)
            }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                decoded += bytes[start..<index]
                index += 1
                guard index < bytes.count else { return nil }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "u"):
                    guard index + 4 <= bytes.count, bytes[index..<index + 4].allSatisfy(Self.isHexDigit),
                        let value = UInt32(
                            String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + 4]), as: UTF8.self),
                            radix: 16),
                        let scalar = Unicode.Scalar(value)
                    else { return nil }
                    index += 4
                    decoded += Array(String(Character(scalar)).utf8)
                default: return nil
                }
                start = index
                continue
            }
            index += 1
        }
        return nil
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    mutating func scalar() -> Scalar? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return string().map(Scalar.string)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            for (word, value) in [("true", true), ("false", false)] where bytes[index...].starts(with: word.utf8) {
                index += word.utf8.count
                return .bool(value)
            }
            return nil
        default:
            let start = index
            while index < bytes.count, "+-.eE0123456789".utf8.contains(bytes[index]) { index += 1 }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let number = Double(text) else { return nil }
            return .number(number, integer: Int64(text))
        }
    }
}
