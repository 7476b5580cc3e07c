internal import CDispatch
internal import CSystemd
internal import Glibc

/// Tells systemd how the service is doing (`sd_notify`): ready, reloading, stopping, a status line and
/// watchdog pings.
///
/// Every call is a no-op when `NOTIFY_SOCKET` is unset (a terminal, a test, a non-notify unit). sd_notify reads
/// the variable on each call, so the notifier keeps no state; it never unsets it, so the service's children
/// could notify too, but the unit's `NotifyAccess=main` makes systemd ignore them.
///
/// ```swift
/// let notifier = ServiceNotifier()
/// notifier.send([.ready, .status("2 sensors connected")])
/// if let interval = ServiceNotifier.watchdogPingInterval() { /* send .watchdog every interval */ }
/// notifier.send([.stopping])
/// ```
public struct ServiceNotifier: Sendable {
    /// One assignment of the notification protocol (sd_notify(3)).
    public enum State: Equatable, Sendable {
        /// `READY=1`: startup is done (or a reload is).
        case ready
        /// `RELOADING=1`: rereading the configuration; send ``ready`` when done.
        case reloading
        /// `STOPPING=1`: shutting down.
        case stopping
        /// `WATCHDOG=1`: still alive.
        case watchdog
        /// `STATUS=...`: one line for `systemctl status` (newlines become spaces).
        case status(String)
        /// `ERRNO=...`: why the service failed, as an errno.
        case errno(Int32)
        /// `EXTEND_TIMEOUT_USEC=...`: more time for the current start, reload or stop.
        case extendTimeout(Duration)

        /// The `KEY=value` line.
        public var assignment: String {
            switch self {
            case .ready: "READY=1"
            case .reloading: "RELOADING=1"
            case .stopping: "STOPPING=1"
            case .watchdog: "WATCHDOG=1"
            case .status(let text): "STATUS=" + String(text.map { $0.isNewline ? " " : $0 })
            case .errno(let code): "ERRNO=\(code)"
            case .extendTimeout(let duration): "EXTEND_TIMEOUT_USEC=\(ServiceNotifier.microseconds(duration))"
            }
        }
    }

    /// What became of a notification.
    public enum Outcome: Equatable, Sendable {
        /// systemd's socket took it.
        case sent
        /// `NOTIFY_SOCKET` is unset: nobody listens, nothing was sent.
        case notListening
        /// Sending failed with this errno (the socket is gone, or the message was refused).
        case failed(Int32)
    }

    public init() {}

    /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
    public var isListening: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends `states` in one datagram.
    @discardableResult
    public func send(_ states: [State]) -> Outcome {
        guard !states.isEmpty else { return .sent }
        let message = Self.message(states)
        let result = sd_notify(0, message)
        if result > 0 { return .sent }
        if result == 0 { return .notListening }
        return .failed(-result)
    }

    /// `READY=1`, with a status line when given.
    @discardableResult
    public func ready(status: String? = nil) -> Outcome {
        send([.ready] + (status.map { [.status($0)] } ?? []))
    }

    /// `STATUS=...`.
    @discardableResult
    public func status(_ text: String) -> Outcome { send([.status(text)]) }

    /// `WATCHDOG=1`.
    @discardableResult
    public func watchdog() -> Outcome { send([.watchdog]) }

    /// `RELOADING=1` with the monotonic time (systemd 253's `Type=notify-reload` asks for `MONOTONIC_USEC`;
    /// older ones ignore it), and a status line when given.
    @discardableResult
    public func reloading(status: String? = nil) -> Outcome {
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let microseconds = Int64(monotonic.tv_sec) * 1_000_000 + Int64(monotonic.tv_nsec) / 1000
        let message =
            Self.message([.reloading] + (status.map { [.status($0)] } ?? [])) + "\nMONOTONIC_USEC=\(microseconds)"
        let result = sd_notify(0, message)
        if result > 0 { return .sent }
        if result == 0 { return .notListening }
        return .failed(-result)
    }

    /// `STOPPING=1`, with a status line when given.
    @discardableResult
    public func stopping(status: String? = nil) -> Outcome {
        send([.stopping] + (status.map { [.status($0)] } ?? []))
    }

    /// The watchdog timeout systemd expects pings within (`WatchdogSec=`, from `WATCHDOG_USEC` when
    /// `WATCHDOG_PID` is unset or this process), or `nil` when the watchdog is off.
    public static func watchdogTimeout() -> Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// How often to send ``State/watchdog``: half the timeout, as sd_watchdog_enabled(3) advises; `nil` when
    /// the watchdog is off.
    public static func watchdogPingInterval() -> Duration? {
        watchdogTimeout().map { $0 / 2 }
    }

    /// The datagram for `states`: one `KEY=value` per line.
    public static func message(_ states: [State]) -> String {
        states.map(\.assignment).joined(separator: "\n")
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
