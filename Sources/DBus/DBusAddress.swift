/// Which bus a ``DBusConnection`` connects to.
public enum DBusAddress: Hashable, Sendable, CustomStringConvertible {
    /// The system bus (where bluetoothd lives): `DBUS_SYSTEM_BUS_ADDRESS` if set, else
    /// `unix:path=/run/dbus/system_bus_socket` (`sd_bus_open_system`).
    case system
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` (`sd_bus_open_user`).
    case session
    /// Any bus by its address, e.g. `unix:path=/tmp/test/bus` from a private `dbus-daemon --print-address`.
    case address(String)

    public var description: String {
        switch self {
        case .system: "system bus"
        case .session: "session bus"
        case .address(let address): address
        }
    }
}
