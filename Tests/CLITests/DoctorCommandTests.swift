import Foundation
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
            let process = Process()
            process.executableURL = WearhouseRunner.executable
            process.arguments = ["fake-bluez", "--address", bus.address, "--duration", "20"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            var rows: [(check: String, status: String, summary: String)] = []
            var status: Int32 = -1
            for _ in 0..<100 {
                let result = try WearhouseRunner.run(arguments(bus))
                rows = try findings(result.stdout)
                status = result.status
                if rows.contains(where: { $0.check == "adapter" }) { break }
                try await Task.sleep(for: .milliseconds(100))
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

    @Test func rejectsABadBusAddress() throws {
        let result = try WearhouseRunner.run(["doctor", "--bus", "/run/dbus/system_bus_socket"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--bus"))
    }
}
