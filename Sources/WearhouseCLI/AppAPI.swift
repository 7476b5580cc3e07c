import DBus
import Foundation
import Gateway
import HealthBus
import Support

/// `wearhouse run --api`: where the service serves `org.wearhouse.Health1`, the store's API for apps
/// (docs/app-api.md).
///
/// `system`, `session`, `none` or a D-Bus address. By default the system bus for root and system users (UID
/// below 1000, such as the unit's `wearhouse` user), the session bus for a person running their own store. The
/// API gets a connection of its own to the bus and to the store, so apps never wait behind bluetoothd's traffic
/// or the gateway's writes. When the default bus cannot be had (no session bus in a terminal without one, the
/// name taken), the service logs a warning and runs without the API; when `--api` names the bus, it stops (69).
struct AppAPI {
    /// Where `--api` says to serve.
    enum Bus: Sendable, Equatable {
        /// `none`: no API.
        case disabled
        case system
        case session
        case address(String)
    }

    /// `--api <system|session|none|address>`.
    static func option<Options: CommandOptions>(_ path: any WritableKeyPath<Options, Bus?> & Sendable)
        -> Option<Options>
    {
        .value(
            "api", value: "system|session|none|address", path,
            help: "Serve the apps' D-Bus API on this bus (default: system for root and system users, else session)."
        ) { text throws(UsageError) in
            switch text {
            case "none": return .disabled
            case "system": return .system
            case "session": return .session
            case let text where text.contains(":"): return .address(text)
            default: throw UsageError("--api: \(echo(text)) is not system, session, none or a D-Bus address")
            }
        }
    }

    private let bus: DBusConnection?
    private let server: HealthBusServer?

    /// Starts serving as `--api` (`requested`) says, on a connection of its own to the store `location` names
    /// (either engine, as `--store` does); `nil` when it was asked for explicitly and could not be served.
    static func start(_ requested: Bus?, store location: String?, log: ServiceLog) async -> AppAPI? {
        let address: DBusAddress
        switch requested ?? (getuid() < 1000 ? .system : .session) {
        case .disabled: return AppAPI(bus: nil, server: nil)
        case .system: address = .system
        case .session: address = .session
        case .address(let text): address = .address(text)
        }
        var bus: DBusConnection?
        do {
            let store = try StoreLocation.open(store: location, mustExist: false)
            let connection = try await DBusConnection.connect(to: address, timeout: .seconds(5))
            bus = connection
            let server = try await HealthBusServer.start(on: connection, store: store, log: log)
            log.notice("serving \(HealthBusAPI.busName) on the \(address)")
            return AppAPI(bus: connection, server: server)
        } catch {
            await bus?.close()
            let reason = (error as? StoreLocation.Failure)?.message ?? "\(error)"
            if requested != nil {
                log.error("cannot serve \(HealthBusAPI.busName) on the \(address): \(reason)")
                return nil
            }
            log.warning("not serving \(HealthBusAPI.busName) to apps (the \(address): \(reason)); give --api to choose")
            return AppAPI(bus: nil, server: nil)
        }
    }

    /// Stops answering apps and leaves the bus.
    func stop() async {
        await server?.stop()
        await bus?.close()
    }
}
