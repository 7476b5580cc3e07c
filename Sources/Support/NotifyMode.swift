/// How characteristic notifications reach the gateway through BlueZ: the central's subscriptions, a sensor's
/// registry entry and the service's configuration all say it with this one type.
public enum NotifyMode: String, Hashable, Sendable, CaseIterable {
    /// `StartNotify`, values in `PropertiesChanged` signals (the default; works with every device).
    case properties
    /// `AcquireNotify`: values on a socket of their own per characteristic, past the bus (opt in per device, for
    /// high notification rates).
    case acquired
}
