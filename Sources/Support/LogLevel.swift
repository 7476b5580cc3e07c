/// How important a log message is; the raw values are syslog's priorities (what the journal's `PRIORITY=` takes).
///
/// The order follows importance: `.debug < .info < … < .critical`, so a logger whose level is `.info` writes
/// every message with `level >= .info`.
public enum LogLevel: Int, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    case critical = 2
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// The name used in the configuration file and as the prefix on a terminal.
    public var description: String {
        switch self {
        case .critical: "critical"
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// The level named `name` (as ``description`` prints it), or `nil`.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = level
    }

    /// More important compares greater (syslog numbers run the other way).
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.rawValue > rhs.rawValue
    }
}
