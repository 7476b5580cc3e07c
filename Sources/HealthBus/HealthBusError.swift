import Foundation
import Health

/// An error the API answers with: a D-Bus error name under `org.wearhouse.Error.` and a message a person can act
/// on (what was wrong, and what to do instead).
public struct HealthBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error names of the API.
    public enum Name {
        /// The app may not do this (write a type without share permission). The message names the command the
        /// store's owner would run to allow it.
        public static let notAuthorized = "org.wearhouse.Error.NotAuthorized"
        /// An argument is malformed or out of range (an inverted time range, an unknown option, a bad id).
        public static let invalidArgument = "org.wearhouse.Error.InvalidArgument"
        /// A type identifier the store does not know.
        public static let unknownType = "org.wearhouse.Error.UnknownType"
        /// A unit that is not a unit, or not one of the type's dimension.
        public static let incompatibleUnit = "org.wearhouse.Error.IncompatibleUnit"
        /// A sample of a batch is invalid, so nothing of the batch was written.
        public static let invalidSample = "org.wearhouse.Error.InvalidSample"
        /// Too much at once: a batch, a bucket count, or calls in flight over the API's limits.
        public static let limitExceeded = "org.wearhouse.Error.LimitExceeded"
        /// The store failed (a disk error, a corrupt file); the service's log has the details.
        public static let failed = "org.wearhouse.Error.Failed"
    }

    /// One of ``Name``'s values.
    public var name: String
    /// What went wrong and what to do about it.
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    static func invalidArgument(_ message: String) -> HealthBusError {
        HealthBusError(name: Name.invalidArgument, message: message)
    }

    static func limitExceeded(_ message: String) -> HealthBusError {
        HealthBusError(name: Name.limitExceeded, message: message)
    }

    /// `text`, cut to `limit` characters (an argument echoed in a message or a log line stays short).
    static func clipped(_ text: String, _ limit: Int = 100) -> String {
        text.count <= limit ? text : text.prefix(limit) + "… (\(text.utf8.count) bytes)"
    }

    /// What a log line may say of an error from the store or the bus: its description up to any statement text
    /// (an SQL statement, which may be megabytes of parameters), at most 1,000 characters.
    static func loggable(_ error: any Error) -> String {
        var text = String(describing: error)
        for marker in [" in: ", "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "WITH "] {
            if let range = text.range(of: marker) { text = String(text[..<range.lowerBound]) }
        }
        return clipped(text, 1_000)
    }

    static func unknownType(_ identifier: String) -> HealthBusError {
        HealthBusError(
            name: Name.unknownType,
            message: "unknown type '\(clipped(identifier))'; the store knows \(HealthTypeCatalog.all.count) types "
                + "with HealthKit's names (heartRate, stepCount, bodyMass, sleepAnalysis, ...): call Types for them")
    }
}
