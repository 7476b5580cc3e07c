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
}
