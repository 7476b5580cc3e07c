/// A JSON value as ``JSONReader`` reads it and ``JSONWriter`` writes it: the one JSON model of the project (GATT's
/// decoded fields, the trace format of docs/trace-format.md, the stores' metadata text).
///
/// Numbers stay exact: a number written without a fraction or an exponent that fits `Int64` is an ``integer(_:)``;
/// any other number is the ``double(_:)`` nearest to its text (correctly rounded), and a double written by
/// ``JSONWriter`` reads back with the same bits.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// Always finite: the reader refuses numbers beyond a double's range, the writer writes non-finite ones as
    /// `null`.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// The members in the order of the text, duplicates included (``subscript(_:)`` takes the last, as most readers
    /// do).
    case object([JSONField])

    /// The value of the last member named `key`, when this is an object that has one.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return fields.last { $0.key == key }?.value
    }

    /// The text of a string.
    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The value of a boolean.
    public var bool: Bool? {
        if case .bool(let flag) = self { flag } else { nil }
    }

    /// The members of an object.
    public var members: [JSONField]? {
        if case .object(let fields) = self { fields } else { nil }
    }

    /// The elements of an array.
    public var elements: [JSONValue]? {
        if case .array(let values) = self { values } else { nil }
    }

    /// Any number as a double (an integer beyond 2^53 rounded to the nearest).
    public var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}

extension [JSONField] {
    /// The value of the last member named `key`, or `nil` when there is none or it is `null` (formats that read
    /// absent and `null` alike).
    public func present(_ key: String) -> JSONValue? {
        guard let value = last(where: { $0.key == key })?.value, value != .null else { return nil }
        return value
    }
}

/// One member of a JSON object.
public struct JSONField: Hashable, Sendable {
    public var key: String
    public var value: JSONValue

    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// Why bytes are not the JSON expected: the byte offset (0-based) where reading stopped, and what was wrong.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "byte \(offset): \(reason)" }
}

/// How much a reader accepts: the text's length and how deeply arrays and objects nest (the outermost one is the
/// first level). Reading never recurses deeper, nor looks further, than these.
public struct JSONLimits: Hashable, Sendable {
    public var maximumDepth: Int
    public var maximumLength: Int

    public init(maximumDepth: Int = 64, maximumLength: Int = 16 << 20) {
        self.maximumDepth = maximumDepth
        self.maximumLength = maximumLength
    }
}
