import Foundation
import TestSupport
import Testing

@testable import DBus

/// `.system` and `.session` follow `DBUS_SYSTEM_BUS_ADDRESS` and `DBUS_SESSION_BUS_ADDRESS`. The environment is
/// given to a child run of this test binary (never `setenv` in a process whose threads use sd-bus).
@Suite(.timeLimit(.minutes(1))) struct DBusAddressTests {
    static let probeName = "org.example.AddressProbe"
    static let childVariable = "WEARHOUSE_BLUEZ_ADDRESS_CHILD"

    @Test func systemAndSessionBusesFollowTheEnvironment() async throws {
        try await withPrivateBus { bus in
            let owner = try await DBusConnection.connect(to: .address(bus.address))
            let request = try await owner.requestName(Self.probeName)
            #expect(request == .primaryOwner)

            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            environment[Self.childVariable] = "1"
            let child = try run(
                CommandLine.arguments[0],
                [
                    "--testing-library", "swift-testing", "--filter",
                    "DBusAddressTests/childConnectsThroughTheEnvironment",
                ],
                environment: environment)
            #expect(child.status == 0, "\(child.output)\(child.error)")
            #expect((child.output + child.error).contains("childConnectsThroughTheEnvironment() passed"))
            await owner.close()
        }
    }

    /// Runs only in the child started above.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] == "1"))
    func childConnectsThroughTheEnvironment() async throws {
        for address in [DBusAddress.system, .session] {
            let connection = try await DBusConnection.connect(to: address)
            let owner = try await connection.nameOwner(Self.probeName)
            #expect(owner.hasPrefix(":"), "\(address)")
            await connection.close()
        }
    }
}
