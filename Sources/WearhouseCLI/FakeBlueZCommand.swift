import BlueZ
import FakeDevices
import Foundation

/// `wearhouse fake-bluez`: runs FakeBlueZ standalone, so wearhouse (or anything else that speaks org.bluez)
/// can be tried without a radio.
struct FakeBlueZCommand: Command {
    let name = "fake-bluez"
    let abstract = "Serve a fake bluetoothd (org.bluez) with simulated sensors on a D-Bus bus."
    let usage = "[--address <dbus-address> | --bus system|session] [--scenario <file>] [--duration <seconds>]"
    var discussion: String {
        """
        Never point this at the real system bus while bluetoothd runs. Start a private bus first:

          dbus-daemon --config-file=bus.conf --print-address --fork     # a config with <type>system</type>
          wearhouse fake-bluez --address unix:path=/tmp/bus &
          DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/bus busctl tree org.bluez

        The scenario file is JSON: {"adapterAddress": "00:AA:01:00:00:01", "peripherals": [{"kind": "chestStrap",
        "address": "C0:FF:EE:00:00:01", "seed": 7, "nearby": true, "faults": {"duplicateEvery": 3}}]}; kinds are
        chestStrap, wristMonitor, footpod, stepCounter, infiniTime. Without one, two chest straps (known, as if
        paired before) and a wrist monitor and a footpod (found by discovery) are served. Sensors run in real time until the process is stopped or --duration passes.
        """
    }
    let options = OptionTable(valued: [
        ("address", "dbus-address", "The bus to serve on, e.g. unix:path=/tmp/bus."),
        ("bus", "bus", "system or session (honours DBUS_SYSTEM_BUS_ADDRESS / DBUS_SESSION_BUS_ADDRESS)."),
        ("scenario", "file", "The peripherals to simulate (JSON)."),
        ("duration", "seconds", "Stop after this many seconds."),
    ])

    /// What is served without a scenario file.
    static let defaultScenario = FakeBlueZScenario(peripherals: [
        .init(
            kind: .chestStrap, address: "C0:FF:EE:00:00:01", name: "Chest strap A", seed: 1, nearby: true, known: true),
        .init(
            kind: .chestStrap, address: "C0:FF:EE:00:00:02", name: "Chest strap B", seed: 2, nearby: true, known: true),
        .init(kind: .wristMonitor, address: "C0:FF:EE:00:00:03", name: "Wrist monitor", seed: 3, nearby: true),
        .init(kind: .footpod, address: "C0:FF:EE:00:00:04", name: "Footpod", seed: 4, nearby: true),
    ])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        let address: DBusAddress
        switch (arguments.option("address"), arguments.option("bus")) {
        case (let text?, nil): address = .address(text)
        case (nil, "system"): address = .system
        case (nil, "session"): address = .session
        case (nil, nil):
            console.error(
                "give --address (a private bus) or --bus system|session", hint: "See 'wearhouse help fake-bluez'.")
            return .usage
        default:
            console.error("give either --address or --bus system|session")
            return .usage
        }
        var duration: Duration?
        if let text = arguments.option("duration") {
            guard let seconds = Double(text), seconds > 0 else {
                console.error("--duration must be a positive number of seconds, not '\(text)'")
                return .usage
            }
            duration = .milliseconds(Int64(seconds * 1000))
        }
        var scenario = Self.defaultScenario
        if let path = arguments.option("scenario") {
            do {
                scenario = try FakeBlueZScenario(contentsOf: URL(fileURLWithPath: path))
            } catch {
                console.error("cannot read the scenario \(path): \(error)")
                return FileManager.default.fileExists(atPath: path) ? .dataError : .noInput
            }
        }
        let fake: FakeBlueZ
        do {
            fake = try await FakeBlueZ.start(on: address, scenario: scenario)
        } catch {
            console.error("cannot serve org.bluez on \(address): \(error)")
            return .unavailable
        }
        console.err(
            "FakeBlueZ serving org.bluez on \(address) with \(scenario.peripherals.count) peripherals: "
                + scenario.peripherals.map { "\($0.kind.rawValue) \($0.address)" }.joined(separator: ", ") + "\n")
        let clock = Task { await fake.runInRealTime() }
        if let duration {
            try? await Task.sleep(for: duration)
        } else {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
        clock.cancel()
        await fake.stop()
        return .success
    }
}
