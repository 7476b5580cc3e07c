import DBus
import FakeDevices
import Foundation
import TestSupport
import Testing

/// FakeBlueZ's fault API, seen from a plain D-Bus client.
@Suite(.serialized) struct FakeBlueZFaultTests {
    static let address = "C0:FF:EE:00:00:08"
    static let path = "/org/bluez/hci0/dev_C0_FF_EE_00_00_08"
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: address, seed: 5, known: true)
    ])

    @Test func abortByLocalFailsConnectUntilCleared() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            await fixture.fake.setConnectFault(.abortByLocal, for: Self.address)
            let failed = await #expect(throws: DBusError.self) {
                try await fixture.call(Self.path, "org.bluez.Device1", "Connect")
            }
            #expect(failed?.name == "org.bluez.Error.Failed")
            #expect(failed?.message == "le-connection-abort-by-local")
            #expect(!fixture.log.all.contains { $0.changes("Connected") })
            await fixture.fake.setConnectFault(nil, for: Self.address)
            try await fixture.connectAndResolve(Self.path)
        }
    }

    @Test func anUnansweredConnectIsBusyThenCancelledByDisconnect() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            await fixture.fake.setConnectFault(.noReply, for: Self.address)
            let client = fixture.client
            let first = Task {
                try await client.call(
                    "org.bluez", path: Self.path, interface: "org.bluez.Device1", member: "Connect",
                    timeout: .seconds(10))
            }
            // Once the fake holds the call, a second Connect is refused.
            for _ in 0..<500 where await !fixture.fake.isConnecting(Self.address) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(await fixture.fake.isConnecting(Self.address))
            let busy = await #expect(throws: DBusError.self) {
                try await fixture.call(Self.path, "org.bluez.Device1", "Connect")
            }
            #expect(busy?.name == "org.bluez.Error.Failed")
            #expect(busy?.message == "Operation already in progress")
            try await fixture.call(Self.path, "org.bluez.Device1", "Disconnect")
            let cancelled = await #expect(throws: DBusError.self) { try await first.value }
            #expect(cancelled?.message == "br-connection-canceled")
            #expect(await !fixture.fake.isConnected(Self.address))
        }
    }

    @Test func aDroppedLinkUnresolvesThenDisconnects() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.path)
            fixture.log.clear()
            await fixture.fake.dropConnection(of: Self.address)
            let signals = try await fixture.log.wait("Connected=false") {
                $0.contains { $0.changes("Connected", to: .boolean(false)) }
            }
            let unresolved = try #require(signals.firstIndex { $0.changes("ServicesResolved", to: .boolean(false)) })
            let disconnected = try #require(signals.firstIndex { $0.changes("Connected", to: .boolean(false)) })
            #expect(unresolved < disconnected)
            await fixture.fake.setNearby(false, for: Self.address)
            await #expect(throws: DBusError.self) { try await fixture.call(Self.path, "org.bluez.Device1", "Connect") }
        }
    }
}

/// Adapter removal and introspection.
@Suite(.serialized) struct FakeBlueZAdapterTests {
    @Test func aRemovedAdapterTakesItsDevicesAlongAndComesBackWithTheKnownOnes() async throws {
        try await FakeBlueZFixture.run(FakeBlueZFaultTests.scenario) { fixture in
            let path = FakeBlueZFaultTests.path
            try await fixture.connectAndResolve(path)
            fixture.log.clear()
            await fixture.fake.removeAdapter()
            let removed = try await fixture.log.wait("adapter removed") {
                $0.contains { $0.member == "InterfacesRemoved" && $0.arguments.first == .objectPath("/org/bluez/hci0") }
            }
            let order = removed.filter { $0.member == "InterfacesRemoved" }
                .compactMap(\.arguments.first?.objectPathValue)
            #expect(order.last == "/org/bluez/hci0")
            // The device object goes after its GATT objects (its Battery1 may go first, with the link).
            let device = try #require(order.lastIndex(of: path))
            #expect(device > 0 && order[..<device].allSatisfy { $0 == path || $0.hasPrefix(path + "/") })
            let gone = await #expect(throws: DBusError.self) {
                try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            }
            #expect(gone?.name == "org.freedesktop.DBus.Error.UnknownObject")
            await fixture.fake.addAdapter()
            let objects = try await fixture.client.managedObjects(destination: "org.bluez")
            #expect(objects["/org/bluez/hci0"]?["org.bluez.Adapter1"] != nil)
            #expect(objects[path]?["org.bluez.Device1"]?["Connected"] == .boolean(false))
            try await fixture.connectAndResolve(path)
        }
    }

    @Test func introspectionDescribesTheCharacteristicInterface() async throws {
        try await FakeBlueZFixture.run(FakeBlueZFaultTests.scenario) { fixture in
            try await fixture.connectAndResolve(FakeBlueZFaultTests.path)
            let hrm = try await fixture.characteristicPath(
                "00002a37-0000-1000-8000-00805f9b34fb", of: FakeBlueZFaultTests.path)
            let reply = try await fixture.call(hrm, "org.freedesktop.DBus.Introspectable", "Introspect")
            let xml = try #require(reply.first?.stringValue)
            for member in ["ReadValue", "WriteValue", "StartNotify", "StopNotify", "Notifying", "Flags", "MTU"] {
                #expect(xml.contains("\"\(member)\""), "\(member)")
            }
            #expect(xml.contains("org.bluez.GattCharacteristic1"))
        }
    }
}
