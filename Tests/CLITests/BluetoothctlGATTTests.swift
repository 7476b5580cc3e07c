import Foundation
import Support
import TestSupport
import Testing

/// The real `bluetoothctl` (Debian's bluez 5.66) against `wearhouse fake-bluez` on a private bus: it connects a
/// strap with its own `connect` and lists the GATT attributes with `gatt.list-attributes`, as on real hardware.
@Suite(.timeLimit(.minutes(1))) struct BluetoothctlGATTTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let devicePath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"

    @Test func listsTheGATTAttributesOfAConnectedStrap() async throws {
        try await withPrivateBus { bus in
            let process = try WearhouseRunner.start(["fake-bluez", "--address", bus.address, "--duration", "30"])
            defer { WearhouseRunner.kill(process) }
            try await waitForDevice(on: bus)
            let bluetoothctl = Bluetoothctl(bus: bus)

            // No GATT objects before the device is connected.
            let before = try bluetoothctl.run("gatt.list-attributes", Self.strap)
            #expect(before.status == 0)
            #expect(!before.stdout.contains(Self.devicePath))

            let connect = try bluetoothctl.run("connect", Self.strap)
            #expect(connect.stdout.contains("Connection successful"), "\(connect.stdout)\(connect.stderr)")
            // bluetoothd replies to Connect before resolving the services (docs/bluez.md, F3).
            try await waitForServicesResolved(on: bus)
            #expect(try bluetoothctl.run("info", Self.strap).stdout.contains("Connected: yes"))

            let listing = try bluetoothctl.run("gatt.list-attributes", Self.strap)
            #expect(listing.status == 0)
            let blocks = Self.blocks(of: listing.stdout)
            let service = Self.devicePath + "/service0001"
            #expect(
                blocks.contains([
                    "Primary Service (Handle 0x0000)", service, "0000180d-0000-1000-8000-00805f9b34fb", "Heart Rate",
                ]), "\(listing.stdout)")
            #expect(
                blocks.contains([
                    "Characteristic (Handle 0x0000)", service + "/char0002", "00002a37-0000-1000-8000-00805f9b34fb",
                    "Heart Rate Measurement",
                ]), "\(listing.stdout)")
            #expect(
                blocks.contains([
                    "Characteristic (Handle 0x0000)", service + "/char0005", "00002a38-0000-1000-8000-00805f9b34fb",
                    "Body Sensor Location",
                ]))
            let names = Set(blocks.compactMap(\.last))
            #expect(names.isSuperset(of: ["Device Information", "Manufacturer Name String", "Battery Level"]))
            // The notifying characteristic's configuration descriptor, and the battery plugin's percentage.
            #expect(listing.stdout.contains("Client Characteristic Configuration"))
            #expect(try bluetoothctl.run("info", Self.strap).stdout.contains("Battery Percentage"))
            // Every attribute is below the device and named by BlueZ's path scheme.
            for block in blocks {
                #expect(block.count == 4 && block[1].hasPrefix(Self.devicePath + "/service"), "\(block)")
            }

            // The same listing through an interactive session on stdin (menu gatt).
            let session = try bluetoothctl.run(
                stdin: "menu gatt\nlist-attributes \(Self.strap)\nback\nquit\n")
            #expect(session.stdout.contains(service + "/char0002"))
        }
    }

    /// The listing as blocks of trimmed lines: a "… (Handle 0x…)" header, then path, UUID and name.
    static func blocks(of output: String) -> [[String]] {
        var blocks: [[String]] = []
        for line in output.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.contains("(Handle 0x") {
                blocks.append([text])
            } else if !blocks.isEmpty, line.hasPrefix("\t") {
                blocks[blocks.count - 1].append(text)
            }
        }
        return blocks
    }

    private func waitForDevice(on bus: PrivateBus) async throws {
        for _ in 0..<100 {
            let tree = try WearhouseRunner.runTool(
                "/usr/bin/busctl", ["--address=\(bus.address)", "tree", "org.bluez", "--list"])
            if tree.status == 0, tree.stdout.contains(Self.devicePath) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("fake-bluez did not serve \(Self.devicePath)")
    }

    private func waitForServicesResolved(on bus: PrivateBus) async throws {
        for _ in 0..<100 {
            let resolved = try WearhouseRunner.runTool(
                "/usr/bin/busctl",
                [
                    "--address=\(bus.address)", "get-property", "org.bluez", Self.devicePath, "org.bluez.Device1",
                    "ServicesResolved",
                ])
            if resolved.stdout.hasPrefix("b true") { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("ServicesResolved never became true")
    }
}

/// `/usr/bin/bluetoothctl` on the private bus (through DBUS_SYSTEM_BUS_ADDRESS), one command per run; without
/// `--timeout` it exits as soon as the command is done.
struct Bluetoothctl {
    let bus: PrivateBus

    var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"] }

    func run(_ arguments: String...) throws -> WearhouseRunner.Result {
        try WearhouseRunner.runTool("/usr/bin/bluetoothctl", arguments, environment: environment)
    }

    /// An interactive session fed from `stdin`.
    func run(stdin: String) throws -> WearhouseRunner.Result {
        WearhouseRunner.Result(
            try TestSupport.runTool("/usr/bin/bluetoothctl", [], environment: environment, stdin: stdin))
    }
}
