import Foundation
import Support
import TestSupport
import Testing

/// `wearhouse fake-bluez` through the real binary on a private bus, checked from outside with busctl.
@Suite(.timeLimit(.minutes(1))) struct FakeBlueZCommandTests {
    @Test func servesBlueZShapedObjects() async throws {
        try await withPrivateBus { bus in
            let process = try WearhouseRunner.start(["fake-bluez", "--address", bus.address, "--duration", "20"])
            defer { WearhouseRunner.kill(process) }
            // Wait until org.bluez is on the bus, then look at the tree from outside.
            var tree = ""
            for _ in 0..<100 {
                let result = try WearhouseRunner.runTool(
                    "/usr/bin/busctl", ["--address=\(bus.address)", "tree", "org.bluez", "--list"])
                if result.status == 0, result.stdout.contains("/org/bluez/hci0") {
                    tree = result.stdout
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(tree.contains("/org/bluez\n"))
            #expect(tree.contains("/org/bluez/hci0\n"))
            let introspect = try WearhouseRunner.runTool(
                "/usr/bin/busctl", ["--address=\(bus.address)", "introspect", "org.bluez", "/org/bluez/hci0"])
            #expect(introspect.stdout.contains("org.bluez.Adapter1"))
            #expect(introspect.stdout.contains("StartDiscovery"))

            // The real bluetoothctl (Debian's bluez, installed by make deps), pointed at the fake, sees the
            // adapter and the known devices as it would on real hardware.
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"]
            let list = try WearhouseRunner.runTool("/usr/bin/bluetoothctl", ["list"], environment: environment)
            #expect(list.stdout.contains("Controller 00:AA:01:00:00:01 fakebluez [default]"))
            let devices = try WearhouseRunner.runTool("/usr/bin/bluetoothctl", ["devices"], environment: environment)
            #expect(devices.stdout.contains("Device C0:FF:EE:00:00:01 Chest strap A"))
            #expect(devices.stdout.contains("Device C0:FF:EE:00:00:02 Chest strap B"))
            let info = try WearhouseRunner.runTool(
                "/usr/bin/bluetoothctl", ["info", "C0:FF:EE:00:00:01"], environment: environment)
            #expect(info.stdout.contains("Name: Chest strap A"))
            #expect(info.stdout.contains("Connected: no"))
            #expect(info.stdout.contains("UUID: Heart Rate"))
        }
    }

    @Test func needsABusAndAReadableScenario() throws {
        #expect(try WearhouseRunner.run(["fake-bluez"]).status == 64)
        let missing = try WearhouseRunner.run([
            "fake-bluez", "--address", "unix:path=/nonexistent", "--scenario", "/nonexistent.json",
        ])
        #expect(missing.status == 66)
    }
}
