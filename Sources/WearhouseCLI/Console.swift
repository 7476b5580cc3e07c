internal import Foundation

/// Where a command writes: stdout carries data only, stderr diagnostics. Injected so tests can capture both.
public struct Console: Sendable {
    public var out: @Sendable (String) -> Void
    public var err: @Sendable (String) -> Void
    /// Whether stdout is a terminal (progress bars, colours).
    public var isTerminal: Bool

    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void, isTerminal: Bool)
    {
        self.out = out
        self.err = err
        self.isTerminal = isTerminal
    }

    /// The process's own stdout and stderr.
    public static let standard = Console(
        out: { FileHandle.standardOutput.write(Data($0.utf8)) },
        err: { FileHandle.standardError.write(Data($0.utf8)) },
        isTerminal: isatty(STDOUT_FILENO) != 0
    )

    /// Writes `Error: message` and a hint to stderr.
    public func error(_ message: String, hint: String? = nil) {
        err("Error: \(message)\n" + (hint.map { "\($0)\n" } ?? ""))
    }
}
