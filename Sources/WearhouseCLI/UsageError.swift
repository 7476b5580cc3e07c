internal import Support

/// A bad command line; exits 64 with the command's usage.
public struct UsageError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// A value from the command line or a file, as an error line repeats it: quoted, at most 64 characters
/// (`Sources/Support/ErrorEcho.swift`). Every message that quotes such a value uses it.
func echo(_ text: some StringProtocol) -> String { ErrorEcho.echo(text) }
