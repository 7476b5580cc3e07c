/// Who a store call is made for. Engines enforce permissions from this, never from anything a caller sends.
public enum Caller: Hashable, Sendable, CustomStringConvertible {
    /// The store's owner (the person running the CLI on their own store, the gateway service): sees and may
    /// write everything.
    case owner
    /// A local app, identified by the bus from its credentials (a unit name, an executable, a UID).
    case app(String)

    public var description: String {
        switch self {
        case .owner: "owner"
        case .app(let identifier): identifier
        }
    }
}

/// What an app may do with one type: HealthKit's read and share (write) authorizations.
public struct TypeAuthorization: Hashable, Sendable {
    public var type: String
    public var read: Bool
    public var share: Bool

    public init(type: String, read: Bool, share: Bool) {
        self.type = type
        self.read = read
        self.share = share
    }
}

/// An app's grants, as `wearhouse apps` lists them.
public struct AppAuthorization: Hashable, Sendable {
    public var app: String
    public var grants: [TypeAuthorization]
    /// Types the app asked for and the owner has not decided on.
    public var pendingRead: [String]
    public var pendingShare: [String]

    public init(app: String, grants: [TypeAuthorization], pendingRead: [String] = [], pendingShare: [String] = []) {
        self.app = app
        self.grants = grants
        self.pendingRead = pendingRead
        self.pendingShare = pendingShare
    }
}

/// One line of the access log: who did what to which type, when, and how many samples it touched. An engine may
/// add up a caller's writes of one type within a minute in one line (the SQLite engine does: a gateway writes
/// several batches a second); the line then has the time of the last one and the samples of all.
public struct AccessLogEntry: Hashable, Sendable {
    public enum Operation: String, Hashable, Sendable {
        case save, query, statistics, changes, delete, grant, revoke
        /// An app asked for permissions (``HealthStore/requestAuthorization(app:read:share:)``).
        case request
        /// An app started observing types (the bus API's `Observe`).
        case observe
    }

    public var at: Instant
    public var caller: Caller
    public var operation: Operation
    public var type: String?
    public var sampleCount: Int
    /// Whether the call was refused for lack of permission.
    public var denied: Bool

    public init(at: Instant, caller: Caller, operation: Operation, type: String?, sampleCount: Int, denied: Bool) {
        self.at = at
        self.caller = caller
        self.operation = operation
        self.type = type
        self.sampleCount = sampleCount
        self.denied = denied
    }
}
