internal import FakeDevices
public import Foundation

/// The private dbus-daemon every bus test starts; the daemon itself is `PrivateDBusDaemon`, which
/// `wearhouse demo` uses too.
public final class PrivateBus: Sendable {
    private let daemon: PrivateDBusDaemon

    /// The address to connect to (`unix:path=…/bus,guid=…`).
    public var address: String { daemon.address }
    /// The temporary directory holding the config, the socket and the daemon's log.
    public var directory: URL { daemon.directory }

    private init(daemon: PrivateDBusDaemon) {
        self.daemon = daemon
    }

    /// Starts a daemon and waits until it has printed its address.
    public static func start() async throws -> PrivateBus {
        PrivateBus(daemon: try await PrivateDBusDaemon.start())
    }

    /// Terminates the daemon and removes its directory. Idempotent.
    public func stop() {
        daemon.stop()
    }
}

/// Runs `body` with a fresh private bus, stopped afterwards whatever happens.
public func withPrivateBus<Result>(_ body: (PrivateBus) async throws -> Result) async throws -> Result {
    let bus = try await PrivateBus.start()
    defer { bus.stop() }
    return try await body(bus)
}
