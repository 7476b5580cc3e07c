/// One HTTP request as the server received it: method, path, query arguments (decoded by libmicrohttpd), headers
/// (names lower-cased) and the body (at most ``HTTPServer/Limits/maximumBodyBytes``).
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query (`/type/heartRate`).
    public var path: String
    public var query: [String: String]
    /// Header names are lower-cased; a header given twice keeps its last value.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The cookies of the `Cookie` header, by name.
    public var cookies: [String: String] {
        var cookies: [String: String] = [:]
        for part in (headers["cookie"] ?? "").split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            cookies[pair[0].trimmingSpaces] = pair[1].trimmingSpaces
        }
        return cookies
    }

    /// The fields of an `application/x-www-form-urlencoded` body; empty for any other body. A field given twice
    /// keeps every value, in order (``formValues``).
    public var formValues: [(name: String, value: String)] {
        guard (headers["content-type"] ?? "").hasPrefix("application/x-www-form-urlencoded") else { return [] }
        return FormEncoding.decode(body)
    }

    /// A form field's first value.
    public func form(_ name: String) -> String? {
        formValues.first { $0.name == name }?.value
    }
}

/// What the server sends back: a status, headers and a body, whole or streamed.
public struct HTTPResponse: Sendable {
    /// The body: bytes, or a producer the server calls until it returns `nil` (each call one chunk; a thrown
    /// error ends the response early, and the client sees a cut transfer).
    public enum Body: Sendable {
        case bytes([UInt8])
        case stream(@Sendable () async throws -> [UInt8]?)
    }

    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Body

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A text body of `contentType` (UTF-8).
    public init(status: Int, contentType: String, text: String, headers: [(name: String, value: String)] = []) {
        self.init(
            status: status, headers: [("Content-Type", contentType)] + headers, body: .bytes(Array(text.utf8)))
    }

    /// A `303 See Other` to `location` (after a POST, or after the login token).
    public static func redirect(_ location: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("Location", location)] + headers)
    }

    /// The first value of a header (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// `application/x-www-form-urlencoded`: `+` is a space, `%XX` a byte; malformed escapes stay as they are.
public enum FormEncoding {
    public static func decode(_ bytes: [UInt8]) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        for part in bytes.split(separator: UInt8(ascii: "&")) {
            let pair = part.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = unescape(pair[0])
            let value = pair.count > 1 ? unescape(pair[1]) : ""
            fields.append((name, value))
        }
        return fields
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986), for building query strings and bodies.
    public static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return out
    }

    static func unescape(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), bytes.endIndex - index >= 3,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
