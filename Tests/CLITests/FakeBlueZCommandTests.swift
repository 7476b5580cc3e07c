import Foundation
import TestSupport
import Testing

/// `wearhouse fake-bluez` through the real binary on a private bus, checked from outside with busctl.
@Suite(.timeLimit(.minutes(1))) struct FakeBlueZCommandTests {
    @Test func servesBlueZShapedObjects() async throws {
        try await withPrivateBus { bus in
            let process = Process()
            process.executableURL = WearhouseRunner.executable
            process.arguments = ["fake-bluez", "--address", bus.address, "--duration", "20"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
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
