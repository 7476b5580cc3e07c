import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Testing

/// `wearhouse pair`'s enrolment against the in-process fake stack.
@Suite struct SensorEnrolmentTests {
    static let strap = "C0:FF:EE:00:00:01"

    /// bluetoothd drops a device it only discovered 30 s after it last saw it (`TemporaryTimeout`): in the BlueZ
    /// VM, a strap found by `wearhouse scan` was gone by the time `wearhouse pair` called Connect
    /// (`UnknownObject`). The enrolment looks for it again by discovery and enrols it.
    @Test func aKnownSensorRemovedBeforeConnectIsFoundAgainByDiscovery() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("enrol-removed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let central = FakeCentral()
        let id = central.add(PeripheralScript(kind: .chestStrap, address: Self.strap, seed: 3))
        // An earlier scan: the strap is known to the stack, as a device only discovered.
        try await central.startDiscovery(services: [], on: nil)
        try await central.stopDiscovery(on: nil)
        #expect(try await central.knownPeripherals().map(\.id) == [id])
        central.injectConnectFault(.removed, for: id)

        let result = try await SensorEnrolment(central: central, registry: store).enrol(
            .init(target: Self.strap, subject: "alice"))
        #expect(result.sensor.address == Self.strap)
        #expect(try await store.registeredSensors().map(\.address) == [Self.strap])
    }

    /// Removed again after the second discovery: the enrolment gives up with the stack's error rather than loop.
    @Test func aSensorRemovedTwiceIsNotLookedForAThirdTime() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("enrol-removed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let central = FakeCentral()
        let id = central.add(PeripheralScript(kind: .chestStrap, address: Self.strap, seed: 3))
        try await central.startDiscovery(services: [], on: nil)
        try await central.stopDiscovery(on: nil)
        central.injectConnectFault(.removed, for: id)
        central.injectConnectFault(.removed, for: id)

        let failure = await #expect(throws: SensorEnrolment.Failure.self) {
            try await SensorEnrolment(central: central, registry: store).enrol(.init(target: Self.strap))
        }
        #expect(failure?.message.contains("UnknownObject") == true)
        #expect(try await store.registeredSensors().isEmpty)
    }
}
