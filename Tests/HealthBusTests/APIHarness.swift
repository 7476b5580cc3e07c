import DBus
import Foundation
import Health
import HealthBus
import SQLiteStore
import Support
import Synchronization
import TestSupport
import WearhouseClient

/// The API served in this process on a private bus, over a fresh store, with clients told apart by connection:
/// the n-th connection that calls is app `app<n>` (one process cannot show two sets of credentials).
final class APIHarness: Sendable {
    let bus: PrivateBus
    /// The owner's connection to the store (as the CLI and the gateway have).
    let store: SQLiteHealthStore
    let directory: URL
    let serverConnection: DBusConnection
    let server: HealthBusServer
    private let names: Names

    /// App names by connection.
    final class Names: Sendable {
        let map = Mutex<[String: String]>([:])
    }

    static let gateway = Source(identifier: "org.wearhouse.gateway")

    private init(
        bus: PrivateBus, store: SQLiteHealthStore, directory: URL, serverConnection: DBusConnection,
        server: HealthBusServer, names: Names
    ) {
        self.bus = bus
        self.store = store
        self.directory = directory
        self.serverConnection = serverConnection
        self.server = server
        self.names = names
    }

    /// - Parameters:
    ///   - log: the server's log (nowhere by default).
    ///   - wrap: the store the server is given, made from its own connection to the store (as it is by default).
    static func start(
        settings: HealthBusServer.Settings = .init(), log: ServiceLog = .disabled,
        wrap: @Sendable (SQLiteHealthStore) -> any HealthStore = { $0 }
    ) async throws -> APIHarness {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-api-\(UUID())")
        let path = directory.appendingPathComponent("health.db").path
        let store = try SQLiteHealthStore(path: path)
        let bus = try await PrivateBus.start()
        let names = Names()
        var settings = settings
        settings.identify = { sender, uid, _ in
            let app = names.map.withLock { names in
                if let known = names[sender] { return known }
                let app = "app\(names.count + 1)"
                names[sender] = app
                return app
            }
            return AppIdentity(uid: uid, unit: app)
        }
        settings.observerPollInterval = .milliseconds(50)
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let server = try await HealthBusServer.start(
            on: connection, store: wrap(try SQLiteHealthStore(path: path)), settings: settings, log: log)
        return APIHarness(
            bus: bus, store: store, directory: directory, serverConnection: connection, server: server, names: names)
    }

    /// A new client connection; its app id is `uid<N>:app<n>` once it has called (``identify(_:)``).
    func client() async throws -> HealthClient {
        try await HealthClient.connect(to: .address(bus.address), timeout: .seconds(20))
    }

    /// Makes `client` known as the next app and returns its app id.
    func identify(_ client: HealthClient) async throws -> String {
        try await client.identity().app
    }

    func stop() async {
        await server.stop()
        await serverConnection.close()
        bus.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Heart-rate samples the gateway wrote, one a second from `start`.
    func gatewayHeartRate(count: Int, from start: Int64 = 1_735_689_600_000) async throws {
        var samples: [QuantitySample] = []
        samples.reserveCapacity(count)
        for index in 0..<count {
            let at = Instant(milliseconds: start + Int64(index) * 1_000)
            samples.append(
                QuantitySample(
                    type: .heartRate, start: at, end: at, value: Double(60 + index % 40), source: Self.gateway,
                    subject: "alice"))
        }
        for batch in stride(from: 0, to: samples.count, by: 5_000) {
            _ = try await store.save(Array(samples[batch..<min(batch + 5_000, samples.count)]), as: .owner)
        }
    }
}

/// Runs `body` with a started harness, stopped afterwards.
func withAPI(
    settings: HealthBusServer.Settings = .init(), log: ServiceLog = .disabled,
    wrap: @Sendable (SQLiteHealthStore) -> any HealthStore = { $0 }, _ body: (APIHarness) async throws -> Void
) async throws {
    let harness = try await APIHarness.start(settings: settings, log: log, wrap: wrap)
    do {
        try await body(harness)
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}

/// The error name of a call that must fail with an API error.
func errorName(_ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        return nil
    } catch let error as HealthBusError {
        return error.name
    } catch {
        return "\(error)"
    }
}

/// Heart rate at `milliseconds`.
func heartRate(_ milliseconds: Int64, _ value: Double) -> QuantitySample {
    QuantitySample(
        type: .heartRate, start: Instant(milliseconds: milliseconds), end: Instant(milliseconds: milliseconds),
        value: value, source: Source(identifier: ""))
}
