/// Why a characteristic value could not be decoded.
///
/// Every case says what was wrong and where: the field and its byte offset in the value. That is enough
/// for a log line, a `wearhouse decode` error message and a regression vector. The cases mirror the error
/// kinds of the project's GATT vectors: `empty`, `truncated`, `malformed`, `invalid_length`, `out_of_range`.
/// See ``DecodingPolicy`` for which inputs produce which error.
public enum DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The value has no bytes at all (a variable-length characteristic needs at least its flags).
    case empty
    /// A mandatory field, or one the flags announce, runs past the end of the value.
    case truncated(field: String, offset: Int, needed: Int, available: Int)
    /// The bytes are there but do not form a valid field (for example an odd byte left in the RR-interval list).
    case malformed(field: String, offset: Int, reason: String)
    /// A fixed-size characteristic arrived with the wrong number of bytes.
    case invalidLength(expected: Int, actual: Int)
    /// A field holds a value its specification excludes (for example a battery level above 100 %).
    case outOfRange(field: String, offset: Int, value: Int)

    /// The snake_case kind, as written in JSON output and in the test vectors.
    public var kind: String {
        switch self {
        case .empty: "empty"
        case .truncated: "truncated"
        case .malformed: "malformed"
        case .invalidLength: "invalid_length"
        case .outOfRange: "out_of_range"
        }
    }

    /// The field that was wrong, when one field was.
    public var field: String? {
        switch self {
        case .empty, .invalidLength: nil
        case .truncated(let field, _, _, _), .malformed(let field, _, _), .outOfRange(let field, _, _): field
        }
    }

    /// The byte offset at which the problem starts.
    public var offset: Int {
        switch self {
        case .empty: 0
        case .invalidLength(let expected, let actual): min(expected, actual)
        case .truncated(_, let offset, _, _), .malformed(_, let offset, _), .outOfRange(_, let offset, _): offset
        }
    }

    public var description: String {
        switch self {
        case .empty:
            "empty value: no bytes at all"
        case .truncated(let field, let offset, let needed, let available):
            "truncated: field '\(field)' at byte offset \(offset) needs \(needed) byte\(needed == 1 ? "" : "s"), "
                + "\(available) left"
        case .malformed(let field, let offset, let reason):
            "malformed: field '\(field)' at byte offset \(offset): \(reason)"
        case .invalidLength(let expected, let actual):
            "invalid length: expected exactly \(expected) byte\(expected == 1 ? "" : "s"), got \(actual)"
        case .outOfRange(let field, let offset, let value):
            "out of range: field '\(field)' at byte offset \(offset) holds \(value)"
        }
    }
}
