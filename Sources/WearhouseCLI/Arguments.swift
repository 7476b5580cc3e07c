/// Options by name, in the form ``StoreLocation`` reads `--store` from. Commands themselves read the typed options
/// their ``CommandSyntax`` fills; ``StoreLocation/open(store:mustExist:)`` builds one of these to pass `--store`
/// through.
public struct Arguments: Equatable, Sendable {
    public var options: [String: String] = [:]

    public init(options: [String: String] = [:]) {
        self.options = options
    }

    /// The value of `--name`, if given.
    public func option(_ name: String) -> String? { options[name] }
}

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
