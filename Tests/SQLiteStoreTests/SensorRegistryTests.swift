import Foundation
import Health
import SQLiteStore
import Support
import Testing

@Suite struct SensorRegistryTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "wearhouse-tests-\(UUID().uuidString)")
    var path: String { directory.appendingPathComponent("health.db").path }

    static let strap = RegisteredSensor(
        address: "a0:9e:1a:00:00:01", adapter: "00:1a:7d:da:71:13", name: "Polar H10 0A1321", label: "red strap",
        subject: "alice", location: "chest",
        device: Device(manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "3.0.35"),
        services: ["0000180d-0000-1000-8000-00805f9b34fb", "0000180a-0000-1000-8000-00805f9b34fb"], paired: true,
        enrolledAt: Instant(seconds: 1_700_000_000))
    static let pod = RegisteredSensor(
        address: "C7:00:00:00:00:02", services: ["00001814-0000-1000-8000-00805f9b34fb"], notifyMode: .acquired,
        enrolledAt: Instant(seconds: 1_700_000_100))

    @Test func registerListAndForget() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: path)
        #expect(try await store.registeredSensors().isEmpty)
        try await store.register(Self.pod)
        try await store.register(Self.strap)
        var strap = Self.strap
        strap.address = "A0:9E:1A:00:00:01"  // stored upper case
        strap.adapter = "00:1A:7D:DA:71:13"
        #expect(try await store.registeredSensors() == [strap, Self.pod])
        // Registering an address again replaces the sensor.
        strap.label = nil
        strap.device = nil
        strap.paired = false
        try await store.register(strap)
        #expect(try await store.registeredSensors().first == strap)
        #expect(try await store.forgetSensor("a0:9e:1a:00:00:01"))
        #expect(try await !store.forgetSensor("A0:9E:1A:00:00:01"))
        #expect(try await store.registeredSensors() == [Self.pod])
        await #expect(throws: InvalidSensorAddressError.self) {
            try await store.register(RegisteredSensor(address: "hrm-1", enrolledAt: Instant(seconds: 0)))
        }
        await #expect(throws: InvalidSensorAddressError.self) { try await store.forgetSensor("A0:9E:1A:00:00") }
    }

    @Test func statusesAreUpsertedAndForgottenWithTheirSensor() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: path)
        try await store.register(Self.strap)
        try await store.register(Self.pod)
        let connecting = SensorStatus(address: "a0:9e:1a:00:00:01", state: "connecting", updatedAt: Instant(seconds: 1))
        try await store.updateStatus([connecting])
        let ready = SensorStatus(
            address: "A0:9E:1A:00:00:01", state: "ready", batteryPercent: 80, lastSampleAt: Instant(seconds: 9),
            notifications: 120, samples: 118, malformed: 1, dropped: 1, reconnects: 2, updatedAt: Instant(seconds: 10))
        let backoff = SensorStatus(
            address: Self.pod.address, state: "backoff", reconnects: 5, updatedAt: Instant(seconds: 10))
        try await store.updateStatus([ready, backoff])
        #expect(try await store.sensorStatuses() == [ready, backoff])
        #expect(try await store.forgetSensor(Self.pod.address))
        #expect(try await store.sensorStatuses() == [ready])
    }

    @Test func theVersionMovesWithTheRegistryNotWithStatuses() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: path)
        let initial = try await store.registryVersion()
        try await store.register(Self.strap)
        let registered = try await store.registryVersion()
        #expect(registered != initial)
        // Registering the same sensor again changes nothing.
        try await store.register(Self.strap)
        #expect(try await store.registryVersion() == registered)
        try await store.updateStatus([
            SensorStatus(address: Self.strap.address, state: "ready", updatedAt: Instant(seconds: 5))
        ])
        _ = try await store.save(
            [
                QuantitySample(
                    type: .heartRate, start: Instant(seconds: 1), end: Instant(seconds: 1), value: 60,
                    source: Source(identifier: "gateway"))
            ], as: .owner)
        #expect(try await store.registryVersion() == registered)
        var relabelled = Self.strap
        relabelled.label = "blue strap"
        try await store.register(relabelled)
        let changed = try await store.registryVersion()
        #expect(changed != registered)
        #expect(try await !store.forgetSensor(Self.pod.address))
        #expect(try await store.registryVersion() == changed)
        #expect(try await store.forgetSensor(Self.strap.address))
        #expect(try await store.registryVersion() != changed)
    }

    @Test func twoStoresOnOneFileSeeEachOthersChanges() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let pairing = try SQLiteHealthStore(path: path)  // `wearhouse pair`
        let service = try SQLiteHealthStore(path: path)  // the running gateway
        let before = try await service.registryVersion()
        try await pairing.register(Self.pod)
        #expect(try await service.registryVersion() != before)
        #expect(try await service.registeredSensors() == [Self.pod])
        let status = SensorStatus(address: Self.pod.address, state: "ready", samples: 3, updatedAt: Instant(seconds: 2))
        try await service.updateStatus([status])
        #expect(try await pairing.sensorStatuses() == [status])
        let seen = try await service.registryVersion()
        #expect(try await pairing.forgetSensor(Self.pod.address))
        #expect(try await service.registryVersion() != seen)
        #expect(try await service.registeredSensors().isEmpty)
        #expect(try await service.sensorStatuses().isEmpty)
    }
}
