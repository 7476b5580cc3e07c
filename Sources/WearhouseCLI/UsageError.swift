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
