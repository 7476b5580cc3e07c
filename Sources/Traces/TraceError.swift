/// A trace that cannot be read or written: the file, the line (when there is one) and what was wrong.
public struct TraceError: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String
    /// 1-based; `nil` for errors about the whole file (cannot open, cannot write).
    public var line: Int?
    public var reason: String

    public init(file: String, line: Int? = nil, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String {
        line.map { "\(file):\($0): \(reason)" } ?? "\(file): \(reason)"
    }
}

/// Something the reader skipped and went on: a torn last line, a line of a kind it does not know.
public struct TraceIssue: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var reason: String

    public init(file: String, line: Int, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String { "\(file):\(line): \(reason)" }
}
