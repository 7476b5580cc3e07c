/// Reads JSON text (RFC 8259) into ``JSONValue``s, without Foundation: the one reader behind GATT's, the trace
/// format's (docs/trace-format.md) and the stores' metadata JSON.
///
/// - Bounded: the text's length and the nesting depth are limited (``JSONLimits``); every step is bounds-checked.
/// - Exact: integers that fit `Int64` stay integers; other numbers are the double nearest to their text. A number
///   beyond a double's range is refused rather than read as infinity.
/// - Strings: escapes are decoded, `\u` surrogate pairs included. A lone surrogate (a high half not followed by
///   `\u` and a low half, or a low half alone) is refused: it names no character, and replacing it would read text
///   that cannot be written back. Bytes that are not UTF-8 (which no writer here produces) read as U+FFFD.
/// - Strict: no leading zeros, no trailing commas, no comments, nothing after the value but white space.
///
/// Errors name the byte offset where reading stopped.
///
/// ```swift
/// let value = try JSONReader.value(Array(#"{"a":[1,2.5,"\ud83c\udfc3"]}"#.utf8))
/// value["a"]   // .array([.integer(1), .double(2.5), .string("🏃")])
/// ```
public enum JSONReader {
    /// The one value in `bytes` (white space around it allowed, nothing else).
    public static func value(
        _ bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits = JSONLimits()
    ) throws(JSONSyntaxError) -> JSONValue {
        var parser = try Parser(bytes, limits: limits)
        parser.scanner.skipSpace()
        let value = try parser.value(depth: 0)
        try parser.end("the value")
        return value
    }

    /// The members of the one object in `bytes` (white space around it allowed, nothing else).
    public static func object(
        _ bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits = JSONLimits()
    ) throws(JSONSyntaxError) -> [JSONField] {
        var parser = try Parser(bytes, limits: limits)
        parser.scanner.skipSpace()
        guard parser.scanner.peek() == UInt8(ascii: "{") else { throw parser.error("expected '{' at the start") }
        let fields = try parser.object(depth: 0)
        try parser.end("the object")
        return fields
    }

    public static func value(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) in try value(buffer, limits: limits) }
    }

    public static func value(_ text: String, limits: JSONLimits = JSONLimits()) throws(JSONSyntaxError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONSyntaxError) in try value(buffer, limits: limits) }
        }
        return try result.get()
    }

    public static func object(
        _ bytes: [UInt8], limits: JSONLimits = JSONLimits()
    ) throws(JSONSyntaxError) -> [JSONField] {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) in try object(buffer, limits: limits) }
    }
}

extension JSONReader {
    /// Recursive descent over the scanner; the depth is bounded by the limits, so is the recursion.
    struct Parser {
        var scanner: JSONScanner
        let limits: JSONLimits

        init(_ bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) throws(JSONSyntaxError) {
            scanner = JSONScanner(bytes)
            self.limits = limits
            guard bytes.count <= limits.maximumLength else {
                throw JSONSyntaxError(
                    offset: max(0, limits.maximumLength),
                    reason: "the text is \(bytes.count) bytes, more than the \(limits.maximumLength) read")
            }
        }

        var bytes: UnsafeBufferPointer<UInt8> { scanner.bytes }

        func error(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
            JSONSyntaxError(offset: offset ?? scanner.position, reason: reason)
        }

        mutating func end(_ what: String) throws(JSONSyntaxError) {
            scanner.skipSpace()
            guard scanner.atEnd else { throw error("unexpected text after \(what)") }
        }

        /// A value at the position (white space before it already skipped); `depth` containers are open.
        mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            guard let first = scanner.peek() else { throw error("the text ends where a value was expected") }
            switch first {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "{"): return .object(try object(depth: depth))
            case UInt8(ascii: "["): return .array(try array(depth: depth))
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                if scanner.literal("true") { return .bool(true) }
                if scanner.literal("false") { return .bool(false) }
                if scanner.literal("null") { return .null }
                throw error("unknown literal")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number()
            default:
                throw error("unexpected character where a value was expected")
            }
        }

        mutating func open(depth: Int) throws(JSONSyntaxError) {
            guard depth < limits.maximumDepth else { throw error("nested more than \(limits.maximumDepth) levels") }
            scanner.position &+= 1
            scanner.skipSpace()
        }

        mutating func object(depth: Int) throws(JSONSyntaxError) -> [JSONField] {
            try open(depth: depth)
            var fields: [JSONField] = []
            if scanner.take(UInt8(ascii: "}")) { return fields }
            while true {
                guard scanner.peek() == UInt8(ascii: "\"") else {
                    throw error(scanner.atEnd ? "the text ends inside an object" : "expected a key in double quotes")
                }
                let key = try string()
                scanner.skipSpace()
                guard scanner.take(UInt8(ascii: ":")) else {
                    throw error(scanner.atEnd ? "the text ends inside an object" : "expected ':' after the key")
                }
                scanner.skipSpace()
                fields.append(JSONField(key: key, value: try value(depth: depth &+ 1)))
                scanner.skipSpace()
                if scanner.take(UInt8(ascii: "}")) { return fields }
                guard scanner.take(UInt8(ascii: ",")) else {
                    throw error(scanner.atEnd ? "the text ends inside an object" : "expected ',' or '}'")
                }
                scanner.skipSpace()
            }
        }

        mutating func array(depth: Int) throws(JSONSyntaxError) -> [JSONValue] {
            try open(depth: depth)
            var elements: [JSONValue] = []
            if scanner.take(UInt8(ascii: "]")) { return elements }
            while true {
                elements.append(try value(depth: depth &+ 1))
                scanner.skipSpace()
                if scanner.take(UInt8(ascii: "]")) { return elements }
                guard scanner.take(UInt8(ascii: ",")) else {
                    throw error(scanner.atEnd ? "the text ends inside an array" : "expected ',' or ']'")
                }
                scanner.skipSpace()
            }
        }

        // MARK: Numbers

        mutating func number() throws(JSONSyntaxError) -> JSONValue {
            if let integer = scanner.integer() { return .integer(integer) }
            let start = scanner.position
            _ = scanner.take(UInt8(ascii: "-"))
            guard let first = scanner.peek(), Self.isDigit(first) else { throw error("a number needs digits") }
            scanner.position &+= 1
            if first == UInt8(ascii: "0"), let next = scanner.peek(), Self.isDigit(next) {
                throw error("a number does not start with 0 followed by digits")
            }
            skipDigits()
            if scanner.take(UInt8(ascii: ".")) {
                guard skipDigits() > 0 else { throw error("a fraction needs digits") }
            }
            if scanner.take(UInt8(ascii: "e")) || scanner.take(UInt8(ascii: "E")) {
                _ = scanner.take(UInt8(ascii: "+")) || scanner.take(UInt8(ascii: "-"))
                guard skipDigits() > 0 else { throw error("an exponent needs digits") }
            }
            // Integers beyond Int64 and numbers with a fraction or an exponent: the standard library's parser
            // rounds correctly.
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<scanner.position]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                throw error("the number is beyond a double's range", at: start)
            }
            return .double(value)
        }

        @discardableResult
        mutating func skipDigits() -> Int {
            let start = scanner.position
            while let byte = scanner.peek(), Self.isDigit(byte) { scanner.position &+= 1 }
            return scanner.position &- start
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

        // MARK: Strings

        /// A string at the opening quote.
        mutating func string() throws(JSONSyntaxError) -> String {
            let opening = scanner.position
            scanner.position &+= 1
            let start = scanner.position
            // Most strings have no escape: decoded where they lie.
            while let byte = scanner.peek() {
                if byte == UInt8(ascii: "\"") {
                    scanner.position &+= 1
                    return String(
                        decoding: UnsafeBufferPointer(rebasing: bytes[start..<(scanner.position &- 1)]), as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { break }
                guard byte >= 0x20 else { throw error("control character inside a string") }
                scanner.position &+= 1
            }
            var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<scanner.position]))
            while let byte = scanner.peek() {
                if byte == UInt8(ascii: "\"") {
                    scanner.position &+= 1
                    return String(decoding: decoded, as: UTF8.self)
                }
                guard byte >= 0x20 else { throw error("control character inside a string") }
                guard byte == UInt8(ascii: "\\") else {
                    decoded.append(byte)
                    scanner.position &+= 1
                    continue
                }
                try escape(into: &decoded)
            }
            throw error("the text ends inside a string (opened at byte \(opening))")
        }

        /// The escape at the backslash, appended as UTF-8.
        mutating func escape(into decoded: inout [UInt8]) throws(JSONSyntaxError) {
            let backslash = scanner.position
            scanner.position &+= 1
            guard let escaped = scanner.peek() else { throw error("the text ends inside an escape") }
            scanner.position &+= 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                var value = try hex4()
                if (0xDC00...0xDFFF).contains(value) {
                    throw error("a low surrogate without a high one before it in a \\u escape", at: backslash)
                }
                if (0xD800...0xDBFF).contains(value) {
                    guard scanner.literal("\\u") else {
                        throw error("a high surrogate without a low one after it in a \\u escape", at: backslash)
                    }
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw error("a high surrogate without a low one after it in a \\u escape", at: backslash)
                    }
                    value = 0x10000 &+ ((value &- 0xD800) << 10) &+ (low &- 0xDC00)
                }
                guard let scalar = Unicode.Scalar(value) else { throw error("invalid \\u escape", at: backslash) }
                UTF8.encode(scalar) { decoded.append($0) }
            default:
                throw error("unknown escape in a string", at: backslash)
            }
        }

        /// Four hex digits (either case).
        mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
            guard bytes.count &- scanner.position >= 4 else { throw error("short \\u escape: it needs 4 hex digits") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[scanner.position]
                let nibble: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = UInt32(byte &- UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = UInt32(byte &- UInt8(ascii: "a") &+ 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = UInt32(byte &- UInt8(ascii: "A") &+ 10)
                default: throw error("bad hex digit in \\u escape")
                }
                value = value << 4 | nibble
                scanner.position &+= 1
            }
            return value
        }
    }
}
