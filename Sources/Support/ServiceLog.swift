internal import Glibc
import Synchronization

/// One extra journal field of a log message, such as `SENSOR=`; its value is masked like the message.
public struct LogField: Sendable, Equatable {
    /// The journal field name: upper-case letters, digits and `_` (other characters become `_`).
    public var name: String
    public var value: LogMessage

    public init(_ name: String, _ value: LogMessage) {
        self.name = Self.journalName(name)
        self.value = value
    }

    /// `SENSOR=` with a sensor's address.
    public static func sensor(_ address: String) -> LogField { LogField("SENSOR", "\(address: address)") }
    /// `ADAPTER=` with an adapter's address.
    public static func adapter(_ address: String) -> LogField { LogField("ADAPTER", "\(address: address)") }

    /// A valid journal field name: `[A-Z0-9_]`, not starting with `_` or a digit (those are the journal's own).
    static func journalName(_ name: String) -> String {
        var result = String(
            name.uppercased().unicodeScalars.map { scalar in
                ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) ? Character(scalar) : "_"
            })
        while let first = result.first, first == "_" || first.isNumber { result.removeFirst() }
        return result.isEmpty ? "FIELD" : result
    }
}

/// A log message after masking, as a destination receives it.
public struct LogEntry: Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var level: LogLevel
    public var message: String
    public var fields: [Field]

    public init(level: LogLevel, message: String, fields: [Field] = []) {
        self.level = level
        self.message = message
        self.fields = fields
    }

    /// The line written to a terminal: `warning: lost SENSOR=C0:FF:**:**:**:01`.
    public var terminalLine: String {
        var line = "\(level): \(message)"
        for field in fields { line += " \(field.name)=\(field.value)" }
        return line.replacingNewlines + "\n"
    }

    /// The journal fields of this entry (`MESSAGE=`, `PRIORITY=`, `SYSLOG_IDENTIFIER=`, then the extra fields).
    public func journalFields(identifier: String) -> [String] {
        ["MESSAGE=\(message)", "PRIORITY=\(level.rawValue)", "SYSLOG_IDENTIFIER=\(identifier)"]
            + fields.map { "\($0.name)=\($0.value)" }
    }
}

/// Where log entries go: standard error here; the systemd journal is one in Gateway (`LogDestination.journal`),
/// where the journal's library is linked.
public struct LogDestination: Sendable {
    private let sink: @Sendable (LogEntry) -> Void

    /// A custom destination (tests capture entries with one).
    public init(_ write: @escaping @Sendable (LogEntry) -> Void) {
        sink = write
    }

    /// Writes one entry.
    public func write(_ entry: LogEntry) {
        sink(entry)
    }

    /// Standard error, one line per entry with the level as prefix.
    public static let standardError = LogDestination { writeStandardError($0.terminalLine) }

    /// Nowhere (a component given no logger).
    public static let discarding = LogDestination { _ in }

    /// Writes all of `text` to fd 2 (not `stderr`, which Swift 6 cannot touch on Linux), retrying on EINTR.
    static func writeStandardError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// The logger of the service and its parts (the gateway, the apps' API): messages with a level and journal fields, filtered by a level that can change at
/// run time (SIGHUP rereads `log-level`), written to one ``LogDestination``.
///
/// Device addresses and measured values are masked unless the level is ``LogLevel/debug`` (see
/// ``LogMessage``). The logger is created by the service and passed down; nothing here is global.
/// ``disabled`` writes nothing, for a component that was given no logger.
///
/// ```swift
/// let log = ServiceLog(level: configuration.service.logLevel, destination: .automatic())
/// log.notice("sensor connected", fields: [.sensor(address)])
/// ```
public final class ServiceLog: Sendable {
    private let threshold: Mutex<LogLevel>
    private let destination: LogDestination

    public init(level: LogLevel = .info, destination: LogDestination) {
        threshold = Mutex(level)
        self.destination = destination
    }

    /// A logger that writes nothing.
    public static let disabled = ServiceLog(level: .critical, destination: .discarding)

    /// The least important level written.
    public var level: LogLevel {
        get { threshold.withLock { $0 } }
        set { threshold.withLock { $0 = newValue } }
    }

    /// Whether a message at `level` would be written.
    public func isEnabled(_ level: LogLevel) -> Bool {
        level >= self.level
    }

    /// Writes `message` when `level` is enabled; the message is built only then.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> LogMessage, fields: [LogField] = []) {
        let threshold = self.level
        guard level >= threshold else { return }
        let revealing = threshold == .debug
        destination.write(
            LogEntry(
                level: level,
                message: Self.capped(message().rendered(revealing: revealing), to: Self.maximumMessageBytes),
                fields: fields.map {
                    LogEntry.Field(
                        name: $0.name,
                        value: Self.capped($0.value.rendered(revealing: revealing), to: Self.maximumFieldBytes))
                }))
    }

    /// The longest message a log line carries, in UTF-8 bytes; longer ones are cut, saying so.
    public static let maximumMessageBytes = 4_096
    /// The longest value of an extra field, in UTF-8 bytes.
    public static let maximumFieldBytes = 1_024

    /// `text` when it fits in `limit` bytes; otherwise its first whole characters within the limit and
    /// `... (cut, N bytes)`, so that no input can make a log line of megabytes.
    static func capped(_ text: String, to limit: Int) -> String {
        let total = text.utf8.count
        guard total > limit else { return text }
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            let width = text[index...index].utf8.count
            guard kept + width <= limit else { break }
            kept += width
            end = text.index(after: index)
        }
        return "\(text[..<end])... (cut, \(total) bytes)"
    }

    public func debug(_ message: @autoclosure () -> LogMessage, fields: [LogField] = []) {
        log(.debug, message(), fields: fields)
    }

    public func info(_ message: @autoclosure () -> LogMessage, fields: [LogField] = []) {
        log(.info, message(), fields: fields)
    }

    public func notice(_ message: @autoclosure () -> LogMessage, fields: [LogField] = []) {
        log(.notice, message(), fields: fields)
    }

    public func warning(_ message: @autoclosure () -> LogMessage, fields: [LogField] = []) {
        log(.warning, message(), fields: fields)
    }

    public func error(_ message: @autoclosure () -> LogMessage, fields: [LogField] = []) {
        log(.error, message(), fields: fields)
    }

    public func critical(_ message: @autoclosure () -> LogMessage, fields: [LogField] = []) {
        log(.critical, message(), fields: fields)
    }
}

extension String {
    /// Newlines as spaces, so that one entry is one line on a terminal.
    fileprivate var replacingNewlines: String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
