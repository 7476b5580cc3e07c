import DBus
import FakeDevices
import Foundation
import Synchronization
import Testing

/// Pair through an agent the client serves, as bluetoothd calls it back.
@Suite(.serialized) struct FakeBlueZPairingTests {
    static let agentInterface = DBusInterface(
        name: "org.bluez.Agent1",
        methods: [
            .init("Release"), .init("Cancel"),
            .init("RequestConfirmation", inputs: [.init("device", .objectPath), .init("passkey", .uint32)]),
        ])

    /// Serves an agent at `/test/agent` answering `answer`, registers it, and returns the calls it got.
    static func registerAgent(
        _ fixture: FakeBlueZFixture, capability: String, answer: DBusReply
    ) async throws -> CallLog {
        let calls = CallLog()
        try await fixture.client.export(
            "/test/agent",
            interfaces: [
                DBusExportedInterface(
                    agentInterface,
                    methodHandler: { [calls] _, call in
                        calls.calls.withLock { $0.append(call) }
                        return answer
                    })
            ])
        try await fixture.call(
            "/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", [.objectPath("/test/agent"), .string(capability)])
        return calls
    }

    @Test func pairAsksTheAgentToConfirmThenUnlocksReads() async throws {
        try await FakeBlueZFixture.run(FakeBlueZSessionTests.scenario) { fixture in
            let calls = try await Self.registerAgent(fixture, capability: "KeyboardDisplay", answer: .empty)
            try await fixture.call(FakeBlueZSessionTests.lockedPath, "org.bluez.Device1", "Pair")
            let received = calls.calls.withLock { $0 }
            #expect(received.map(\.member) == ["RequestConfirmation"])
            #expect(
                received.first?.arguments == [
                    .objectPath(FakeBlueZSessionTests.lockedPath), .uint32(FakeBlueZ.pairingPasskey),
                ])
            try await fixture.log.wait("Paired=true") { $0.contains { $0.changes("Paired", to: .boolean(true)) } }
            try await fixture.log.wait("resolved") {
                $0.contains { $0.changes("ServicesResolved", to: .boolean(true)) }
            }
            let location = try await fixture.characteristicPath(
                FakeBlueZSessionTests.locationUUID, of: FakeBlueZSessionTests.lockedPath)
            let value = try await fixture.call(
                location, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
            #expect(value.first?.bytesValue == [1])
        }
    }

    @Test func aRejectingAgentFailsPair() async throws {
        try await FakeBlueZFixture.run(FakeBlueZSessionTests.scenario) { fixture in
            let calls = try await Self.registerAgent(
                fixture, capability: "DisplayYesNo", answer: .error(name: "org.bluez.Error.Rejected", message: "no"))
            let failed = await #expect(throws: DBusError.self) {
                try await fixture.call(FakeBlueZSessionTests.lockedPath, "org.bluez.Device1", "Pair")
            }
            #expect(failed?.name == "org.bluez.Error.AuthenticationRejected")
            #expect(calls.calls.withLock { $0.count } == 1)
            #expect(!fixture.log.all.contains { $0.changes("Paired", to: .boolean(true)) })
        }
    }

    @Test func aNoInputNoOutputAgentIsNotCalled() async throws {
        try await FakeBlueZFixture.run(FakeBlueZSessionTests.scenario) { fixture in
            let calls = try await Self.registerAgent(fixture, capability: "NoInputNoOutput", answer: .empty)
            try await fixture.call(FakeBlueZSessionTests.lockedPath, "org.bluez.Device1", "Pair")
            #expect(calls.calls.withLock { $0.isEmpty })
            try await fixture.log.wait("Paired=true") { $0.contains { $0.changes("Paired", to: .boolean(true)) } }
        }
    }
}

/// The calls an agent received.
final class CallLog: Sendable {
    let calls = Mutex<[DBusMethodCall]>([])
}
