public import DBus
public import GATT

/// R8 of `docs/bluez.md`: what a failed org.bluez call means for a sensor session.
///
/// | class | BlueZ answers | a session |
/// |---|---|---|
/// | transient | `Failed` `le-connection-abort-by-local`, `-timeout`, `-busy`, `-abort-by-remote`, `-refused`, `-gatt-browsing`, `br-connection-canceled`, "Software caused connection abort" | waits for `Connected=false`, retries with backoff |
/// | inProgress | `InProgress`; in 5.66 a second LE Connect answers `Failed` "Operation already in progress" | disconnects once, then retries patiently |
/// | deviceMissing | `UnknownObject`, `DoesNotExist` | rediscovers, long backoff |
/// | authentication | `AuthenticationFailed/Rejected/Canceled/Timeout`, `le-connection-key-missing`, `NotPermitted` "Not paired", `ConnectionAttemptFailed` during Pair | alerts; re-pairs only if allowed |
/// | timeout | our deadline passed, or the bus answered `NoReply` | cancels (Disconnect), retries with backoff |
/// | unavailable | `NotReady` (adapter off), `ServiceUnknown`/`NameHasNoOwner` (no bluetoothd), closed connection | waits for the stack |
/// | notPermitted | `NotPermitted`, `NotAuthorized`, `NotSupported`, `InvalidOffset` | reports; the characteristic is not usable |
extension CentralError {
    /// Classifies a D-Bus failure of `operation` (e.g. `Connect`).
    public init(_ error: DBusError, operation: String) {
        let detail = [error.name, error.message].compactMap { $0 }.joined(separator: ": ")
        self.init(Self.kind(of: error), operation: operation, detail: detail)
    }

    static let transientMessages: Set<String> = [
        "le-connection-abort-by-local", "le-connection-timeout", "le-connection-busy", "le-connection-refused",
        "le-connection-abort-by-remote", "le-connection-gatt-browsing", "le-connection-unknown",
        "br-connection-canceled", "Software caused connection abort", "Connection timed out",
    ]

    static func kind(of error: DBusError) -> Kind {
        switch error.kind {
        case .timedOut, .noReply: return .timeout
        case .closed: return .unavailable
        case .cancelled: return .other
        case .remote: break
        default: return .other
        }
        let name = error.name ?? ""
        let message = error.message
        switch name {
        case "org.bluez.Error.InProgress": return .inProgress
        case "org.bluez.Error.Failed":
            if message == "Operation already in progress" { return .inProgress }
            if transientMessages.contains(message) { return .transient }
            if message == "le-connection-key-missing" { return .authentication }
            return .other
        case "org.freedesktop.DBus.Error.UnknownObject", "org.bluez.Error.DoesNotExist":
            return .deviceMissing
        case "org.bluez.Error.AuthenticationFailed", "org.bluez.Error.AuthenticationRejected",
            "org.bluez.Error.AuthenticationCanceled", "org.bluez.Error.AuthenticationTimeout",
            "org.bluez.Error.ConnectionAttemptFailed":
            return .authentication
        case "org.bluez.Error.NotPermitted":
            return message == "Not paired" ? .authentication : .notPermitted
        case "org.bluez.Error.NotAuthorized", "org.bluez.Error.NotSupported", "org.bluez.Error.InvalidOffset":
            return .notPermitted
        case "org.bluez.Error.NotReady", "org.freedesktop.DBus.Error.ServiceUnknown",
            "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.Disconnected":
            return .unavailable
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
            "org.freedesktop.DBus.Error.TimedOut":
            return .timeout
        default:
            return .other
        }
    }
}
