public import GATT

/// What follows a failed Connect, by the failure's class (``GATT/CentralError/Kind``, from
/// Sources/BlueZ/BlueZErrorClassification.swift; `docs/bluez.md` R8, R9). The service's sessions
/// (``SensorSessionState``) and `wearhouse pair` (``SensorEnrolment``) both follow it, each waiting with a
/// ``Support/Backoff``.
public enum ConnectRetry: Hashable, Sendable {
    /// The stack or the device object is gone: wait for it to come back (a session) or give up (pairing).
    case waitForStack
    /// Retry after the backoff, but not sooner than `atLeast`; `disconnectFirst` cancels a stale Connect that
    /// bluetoothd still has pending (R8).
    case retry(atLeast: Duration, disconnectFirst: Bool)

    /// The rule for `kind`; `slowRetry` is the wait after a failed authentication.
    public static func after(_ kind: CentralError.Kind, slowRetry: Duration) -> ConnectRetry {
        switch kind {
        case .unavailable, .deviceMissing: .waitForStack
        case .inProgress: .retry(atLeast: .seconds(2), disconnectFirst: true)
        case .authentication: .retry(atLeast: slowRetry, disconnectFirst: false)
        case .transient, .timeout, .notPermitted, .other: .retry(atLeast: .zero, disconnectFirst: false)
        }
    }
}
