import Foundation
import Support
import TestSupport
import Testing

/// `wearhouse doctor` through the real binary, against an empty private bus and against `wearhouse fake-bluez`.
@Suite(.timeLimit(.minutes(1))) struct DoctorCommandTests {
    /// The findings of `wearhouse doctor --json` as (check, status, summary) rows.
    func findings(_ output: String) throws -> [(check: String, status: String, summary: String)] {
        try output.split(separator: "\n").map { line in
            let object = try WearhouseRunner.json(line)
            return (
                object["check"] as? String ?? "", object["status"] as? String ?? "", object["summary"] as? String ?? ""
            )
        }
    }

    func arguments(_ bus: PrivateBus) -> [String] {
        [
            "doctor", "--json", "--bus", bus.address, "--config",
            bus.directory.appendingPathComponent("none.conf").path,
            "--store", bus.directory.appendingPathComponent("health.db").path,
        ]
    }

    @Test func emptyBusReportsBluetoothdMissing() async throws {
        try await withPrivateBus { bus in
            let result = try WearhouseRunner.run(arguments(bus))
            #expect(result.status == 69)
            let rows = try findings(result.stdout)
            let bluetoothd = rows.first { $0.check == "bluetoothd" }
            #expect(bluetoothd?.status == "error")
            #expect(bluetoothd?.summary.contains("nobody owns org.bluez") == true)
            // Then the kernel is asked over HCI; the test machines have no Bluetooth in the kernel at all.
            let descriptor = socket(31, Int32(SOCK_RAW.rawValue), 1)
            let lacksBluetooth = descriptor < 0 && errno == EAFNOSUPPORT
            if descriptor >= 0 { close(descriptor) }
            if lacksBluetooth {
                let kernel = rows.first { $0.check == "kernel" }
                #expect(kernel?.status == "error")
                #expect(kernel?.summary.contains("AF_BLUETOOTH socket family is missing") == true)
            }
        }
    }

    @Test func fakeBlueZAdapterIsPowered() async throws {
        try await withPrivateBus { bus in
            let process = try WearhouseRunner.start(["fake-bluez", "--address", bus.address, "--duration", "20"])
            defer { WearhouseRunner.kill(process) }
            var rows: [(check: String, status: String, summary: String)] = []
            var status: Int32 = -1
            _ = try await eventually(timeout: .seconds(10)) {
                let result = try WearhouseRunner.run(arguments(bus))
                rows = try findings(result.stdout)
                status = result.status
                return rows.contains { $0.check == "adapter" }
            }
            #expect(rows.first { $0.check == "bluetoothd" }?.status == "ok")
            let adapter = rows.first { $0.check == "adapter" }
            #expect(adapter?.status == "ok")
            #expect(adapter?.summary == "adapter hci0 (00:AA:01:00:00:01) is powered and can act as an LE central")
            // bluetoothd answered, so HCI is not asked.
            #expect(!rows.contains { $0.check == "kernel" || $0.check == "controller" })
            #expect(status == (rows.contains { $0.status == "error" } ? 69 : 0))

            let text = try WearhouseRunner.run(Array(arguments(bus).filter { $0 != "--json" }))
            #expect(text.stdout.contains("ok       adapter"))
            #expect(text.stdout.contains(" error"))
        }
    }

    /// A glucose meter enrolled with `wearhouse pair` (which bonds it) is reported bonded; once bluetoothd has
    /// forgotten it (its bond removed), doctor says that it will send nothing and how to pair it again.
    @Test func aGlucoseMetersBondIsExplained() async throws {
        try await withPrivateBus { bus in
            let meter = "C0:FF:EE:00:00:08"
            let scenario = bus.directory.appendingPathComponent("meter.json")
            try Data(#"{"peripherals":[{"kind":"glucoseMeter","address":"\#(meter)","seed":3}]}"#.utf8)
                .write(to: scenario)
            let process = try WearhouseRunner.start([
                "fake-bluez", "--address", bus.address, "--scenario", scenario.path, "--duration", "30",
            ])
            defer { WearhouseRunner.kill(process) }
            let store = bus.directory.appendingPathComponent("health.db").path
            // The fake serves once it owns org.bluez; pair waits for nothing else.
            var pair = WearhouseRunner.Result(ToolRun(status: -1, stdout: "", stderr: ""))
            _ = try await eventually(timeout: .seconds(5)) {
                pair = try WearhouseRunner.run(["pair", meter, "--bus", bus.address, "--store", store])
                return pair.status == 0
            }
            #expect(pair.status == 0, "\(pair.stderr)")
            let bonded = try findings(WearhouseRunner.run(arguments(bus)).stdout).first { $0.check == "bonding" }
            #expect(bonded?.status == "ok")
            #expect(bonded?.summary == "sensor \(meter) is a glucose meter and is bonded")

            // bluetoothctl remove: the device and its bond are gone from bluetoothd.
            let removed = try WearhouseRunner.runTool(
                "/usr/bin/busctl",
                [
                    "--address=\(bus.address)", "call", "org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1",
                    "RemoveDevice", "o", "/org/bluez/hci0/dev_" + meter.replacingOccurrences(of: ":", with: "_"),
                ])
            #expect(removed.status == 0, "\(removed.stderr)")
            let gone = try findings(WearhouseRunner.run(arguments(bus)).stdout).first { $0.check == "bonding" }
            #expect(gone?.status == "warning")
            #expect(gone?.summary.contains("bluetoothd does not know it") == true)
        }
    }

    @Test func rejectsABadBusAddress() throws {
        let result = try WearhouseRunner.run(["doctor", "--bus", "/run/dbus/system_bus_socket"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--bus"))
    }
}
