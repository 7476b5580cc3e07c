/// A single complete D-Bus type, as a signature describes it.
///
/// `a{sv}` is ``dictionary(key:value:)`` (an array of dict entries), never `array` of something; every other array
/// is ``array(_:)``. Parse signatures with ``init(signature:)`` (exactly one type) or ``list(_:)`` (any number).
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    /// `aT`: an array of `T` (`T` is never a dict entry).
    case array(DBusType)
    /// `a{KV}`: an array of dict entries; `K` is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    /// `(…)`: a struct with at least one member.
    case `struct`([DBusType])
    /// `v`: a value carrying its own type.
    case variant

    /// The longest signature D-Bus allows.
    static let maximumSignatureLength = 255
    /// Containers nest at most this deep here (the specification allows 32 arrays plus 32 structs).
    static let maximumDepth = 64

    /// The type code of a basic type, or of the container (`a`, `(`, `v`).
    var code: UInt8 {
        switch self {
        case .byte: UInt8(ascii: "y")
        case .boolean: UInt8(ascii: "b")
        case .int16: UInt8(ascii: "n")
        case .uint16: UInt8(ascii: "q")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .signature: UInt8(ascii: "g")
        case .unixFD: UInt8(ascii: "h")
        case .array, .dictionary: UInt8(ascii: "a")
        case .struct: UInt8(ascii: "(")
        case .variant: UInt8(ascii: "v")
        }
    }

    /// Whether this is a basic (non-container) type, the only kind allowed as a dictionary key.
    public var isBasic: Bool {
        switch self {
        case .array, .dictionary, .struct, .variant: false
        default: true
        }
    }

    /// The signature of this one type: `y`, `as`, `a{sv}`, `(ii)`, `a{oa{sa{sv}}}`.
    public var signature: String {
        switch self {
        case .array(let element): "a" + element.signature
        case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
        case .struct(let members): "(" + members.map(\.signature).joined() + ")"
        default: String(UnicodeScalar(code))
        }
    }

    public var description: String { signature }

    /// Parses a signature holding exactly one complete type.
    /// - Throws: ``DBusError`` of kind `invalidSignature` when the signature is empty, malformed or holds more
    ///   than one type.
    public init(signature: String) throws(DBusError) {
        let types = try DBusType.list(signature)
        guard types.count == 1, let type = types.first else {
            throw DBusError(
                kind: .invalidSignature, operation: "parse signature",
                message: "'\(signature)' holds \(types.count) complete types, not one")
        }
        self = type
    }

    /// Parses a signature holding any number of complete types (a message body's signature; `""` is empty).
    /// - Throws: ``DBusError`` of kind `invalidSignature` when the signature is malformed.
    public static func list(_ signature: String) throws(DBusError) -> [DBusType] {
        let bytes = Array(signature.utf8)
        guard bytes.count <= maximumSignatureLength else {
            throw invalid(signature, "longer than \(maximumSignatureLength) bytes")
        }
        var index = 0
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne(bytes, &index, depth: 0, signature: signature))
        }
        return types
    }

    /// The signature of a list of types, as a message body or struct carries it.
    public static func signature(of types: [DBusType]) -> String {
        types.map(\.signature).joined()
    }

    private static func parseOne(
        _ bytes: [UInt8], _ index: inout Int, depth: Int, signature: String
    ) throws(DBusError) -> DBusType {
        guard depth < maximumDepth else { throw invalid(signature, "nested deeper than \(maximumDepth)") }
        guard index < bytes.count else { throw invalid(signature, "ends inside a container") }
        let code = bytes[index]
        index += 1
        if let basic = basicTypes[code] { return basic }
        switch code {
        case UInt8(ascii: "v"):
            return .variant
        case UInt8(ascii: "a"):
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
                return .array(try parseOne(bytes, &index, depth: depth + 1, signature: signature))
            }
            index += 1
            let key = try parseOne(bytes, &index, depth: depth + 1, signature: signature)
            guard key.isBasic else { throw invalid(signature, "dictionary key '\(key)' is not a basic type") }
            let value = try parseOne(bytes, &index, depth: depth + 1, signature: signature)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                throw invalid(signature, "a dict entry holds exactly one key and one value")
            }
            index += 1
            return .dictionary(key: key, value: value)
        case UInt8(ascii: "("):
            var members: [DBusType] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                members.append(try parseOne(bytes, &index, depth: depth + 1, signature: signature))
            }
            guard index < bytes.count else { throw invalid(signature, "unterminated struct") }
            guard !members.isEmpty else { throw invalid(signature, "empty struct") }
            index += 1
            return .struct(members)
        default:
            throw invalid(signature, "unexpected '\(String(UnicodeScalar(code)))'")
        }
    }

    private static let basicTypes: [UInt8: DBusType] = {
        let all: [DBusType] = [
            .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
            .string, .objectPath, .signature, .unixFD,
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.code, $0) })
    }()

    private static func invalid(_ signature: String, _ reason: String) -> DBusError {
        DBusError(kind: .invalidSignature, operation: "parse signature", message: "'\(signature)': \(reason)")
    }
}
