/// What happened to one sample of a saved batch (`docs/store-semantics.md`, items 21-23).
public enum WriteOutcome: String, Hashable, Sendable {
    /// Stored as a new sample.
    case inserted
    /// Already stored with the same key and the same value: nothing changed. Writing a batch twice reports
    /// every sample as a duplicate, never as an error.
    case duplicate
    /// Same key, different value or subject: the first write stands.
    case conflict
    /// A greater version of the same external UUID replaced the stored one (which leaves a tombstone).
    case replaced
    /// A lower version of a stored external UUID: ignored.
    case stale
    /// The batch held an invalid sample, so nothing of it was written.
    case rejected
}

/// Why a batch was rejected: which sample, and what was wrong with it.
public struct InvalidSampleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The position of the offending sample in the batch (0-based).
    public var index: Int
    public var reason: String

    public init(index: Int, reason: String) {
        self.index = index
        self.reason = reason
    }

    public var description: String { "sample \(index + 1) of the batch: \(reason)" }

    /// What `body` returns; an ``InvalidSampleError`` it throws names its sample `first` places further on (a part
    /// of a larger batch saved on its own).
    public static func offset<Result>(by first: Int, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as InvalidSampleError {
            throw InvalidSampleError(index: first + error.index, reason: error.reason)
        }
    }
}

/// An app tried to write a type it has no share permission for.
public struct NotAuthorizedError: Error, Hashable, Sendable, CustomStringConvertible {
    public var caller: Caller
    public var type: String

    public init(caller: Caller, type: String) {
        self.caller = caller
        self.type = type
    }

    public var description: String {
        "\(caller) is not allowed to write \(type); grant it with: wearhouse grant \(caller) --write \(type)"
    }
}
