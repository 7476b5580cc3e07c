/// How the fake stack answers the next `Connect` for a peripheral, mirroring what bluetoothd does.
public enum ConnectFault: Hashable, Sendable {
    /// `org.bluez.Error.Failed: le-connection-abort-by-local`, the most common transient failure.
    case abortByLocal
    /// `org.bluez.Error.Failed` with another `src/error.h` message (`le-connection-timeout`, ...).
    case failed(String)
    /// `org.bluez.Error.InProgress`: the stack thinks a connect is already pending.
    case inProgress
    /// No reply at all: the call hangs until the caller's timeout runs out on the manual clock.
    case noReply
    /// The device object is gone just before the call: bluetoothd drops a device it only discovered
    /// `TemporaryTimeout` (30 s) after it last saw it, so Connect answers `UnknownObject` and the peripheral is
    /// unknown until discovery finds it again (it still advertises). Seen in the BlueZ VM (docs/bluez-vm.md).
    case removed
}
