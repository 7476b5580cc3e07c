import DBus
import FakeDevices
import Foundation
import Synchronization
import TestSupport

/// Every signal FakeBlueZ emits, as a client receives them, in order.
final class SignalLog: Sendable {
    private let signals = Mutex<[DBusSignal]>([])

    /// Starts collecting from `subscription` (the task ends when the connection closes).
    static func collecting(_ subscription: DBusSignalSubscription) -> SignalLog {
        let log = SignalLog()
        Task {
            for await signal in subscription { log.signals.withLock { $0.append(signal) } }
        }
        return log
    }

    var all: [DBusSignal] { signals.withLock { $0 } }

    func clear() { signals.withLock { $0.removeAll() } }

    /// Waits (up to 5 s) until `done` holds for the signals so far; returns them.
    @discardableResult
    func wait(
        _ what: String, timeout: Duration = .seconds(5), until done: ([DBusSignal]) -> Bool
    ) async throws -> [DBusSignal] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let current = all
            if done(current) { return current }
            guard ContinuousClock.now < deadline else {
                throw FakeBlueZError(message: "timed out waiting for \(what); got \(current.map(\.summary))")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension DBusSignal {
    /// `PropertiesChanged` on `path` that sets `property` (to `value`, when given).
    func changes(_ property: String, to value: DBusValue? = nil, at path: String? = nil) -> Bool {
        guard member == "PropertiesChanged", path.map({ $0 == self.path }) ?? true,
            let changed = arguments.dropFirst().first?.stringKeyedValue, let new = changed[property]
        else { return false }
        return value.map { $0 == new } ?? true
    }

    /// `InterfacesAdded` of an object below `prefix` holding `interface`.
    func adds(_ interface: String, under prefix: String = "/") -> Bool {
        guard member == "InterfacesAdded", let object = arguments.first?.objectPathValue,
            object.hasPrefix(prefix), let interfaces = arguments.dropFirst().first?.stringKeyedValue
        else { return false }
        return interfaces[interface] != nil
    }

    var summary: String { "\(member) \(path) \(arguments.map(\.description).joined(separator: " "))" }
}

/// A private bus with FakeBlueZ serving `scenario` and a plain client connection listening to its signals.
struct FakeBlueZFixture {
    let daemon: PrivateBus
    let fake: FakeBlueZ
    let client: DBusConnection
    let log: SignalLog

    static func run<T>(_ scenario: FakeBlueZScenario, _ body: (FakeBlueZFixture) async throws -> T) async throws -> T {
        let daemon = try await PrivateBus.start()
        defer { daemon.stop() }
        let fake = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
        let client: DBusConnection
        do {
            client = try await DBusConnection.connect(to: .address(daemon.address))
        } catch {
            await fake.stop()
            throw error
        }
        do {
            let subscription = try await client.subscribe(to: DBusMatchRule(sender: await fake.uniqueName))
            let result = try await body(
                FakeBlueZFixture(daemon: daemon, fake: fake, client: client, log: .collecting(subscription)))
            let errors = await fake.emissionErrors
            guard errors.isEmpty else { throw FakeBlueZError(message: "emission errors: \(errors)") }
            await client.close()
            await fake.stop()
            return result
        } catch {
            await client.close()
            await fake.stop()
            throw error
        }
    }

    @discardableResult
    func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws
        -> [DBusValue]
    {
        try await client.call("org.bluez", path: path, interface: interface, member: member, arguments: arguments)
    }

    /// Connects the device at `path` and waits for ServicesResolved=true.
    func connectAndResolve(_ path: String) async throws {
        try await call(path, "org.bluez.Device1", "Connect")
        try await log.wait("ServicesResolved") { $0.contains { $0.changes("ServicesResolved", to: .boolean(true)) } }
    }

    /// The characteristic path of `uuid` under `device`, from GetManagedObjects.
    func characteristicPath(_ uuid: String, of device: String) async throws -> String {
        let objects = try await client.managedObjects(destination: "org.bluez")
        let path = objects.first { path, interfaces in
            path.hasPrefix(device) && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.stringValue == uuid
        }?.key
        guard let path else { throw FakeBlueZError(message: "no characteristic \(uuid)") }
        return path
    }
}

/// Runs `body` with a private bus, FakeBlueZ serving `scenario` on it, and a client connection; closes the
/// connection and stops FakeBlueZ afterwards, whatever happens.
func withFakeBlueZ(
    _ scenario: FakeBlueZScenario, _ body: (PrivateBus, FakeBlueZ, DBusConnection) async throws -> Void
) async throws {
    let daemon = try await PrivateBus.start()
    defer { daemon.stop() }
    let fake = try await FakeBlueZ.start(on: .address(daemon.address), scenario: scenario)
    do {
        let bus = try await DBusConnection.connect(to: .address(daemon.address))
        do {
            try await body(daemon, fake, bus)
        } catch {
            await bus.close()
            throw error
        }
        await bus.close()
    } catch {
        await fake.stop()
        throw error
    }
    await fake.stop()
}
