internal import Support

/// Why a line is not the JSON a trace holds: the byte offset (0-based) in the line and what was wrong.
public struct TraceSyntaxError: Error, Hashable, Sendable {
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    init(_ error: JSONSyntaxError) {
        self.init(offset: error.offset, reason: error.reason)
    }
}

extension JSONLimits {
    /// What one trace line may be (docs/trace-format.md): an object nested a few levels at most (later versions may
    /// nest more, up to this), and 16 MiB, far more than the longest value a read returns.
    static let traceLine = JSONLimits(maximumDepth: 16, maximumLength: 16 << 20)
}

/// The members of a trace line: fields that have no value are left out (docs/trace-format.md).
extension JSONWriter {
    mutating func member(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(key)
        string(value)
    }

    mutating func member<Value: BinaryInteger>(_ key: StaticString, _ value: Value?) {
        guard let value else { return }
        self.key(key)
        integer(Int64(value))
    }

    mutating func member(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bool(value)
    }

    mutating func member(_ key: StaticString, _ values: [String]) {
        self.key(key)
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    mutating func member(_ key: StaticString, hex value: [UInt8]) {
        self.key(key)
        hex(value)
    }
}
